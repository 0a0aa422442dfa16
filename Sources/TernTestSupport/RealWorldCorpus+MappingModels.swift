public import TernCore
import TernFormats
import TernMigration

extension RealWorldCorpus.Item {
    /// The model of a mapping model item: the one its manifest names, or else the model of its
    /// folder whose versions the mapping model's embedded models match, as Core Data finds them
    /// by hash; nil when none matches.
    ///
    /// - Throws: When the corpus's manifests or the named model cannot be read.
    public func mappingModelsModel() throws -> VersionedModel? {
        if let modelURL { return try XcodeModel.readVersionedModel(at: modelURL) }
        let candidates = try RealWorldCorpus.items(of: .model).filter { $0.folder == folder }
        for candidate in candidates {
            guard let model = try? XcodeModel.readVersionedModel(at: candidate.url) else { continue }
            if (try? StepMapping.xcodeMappingVersions(at: url, in: model)) != nil { return model }
        }
        return nil
    }
}
