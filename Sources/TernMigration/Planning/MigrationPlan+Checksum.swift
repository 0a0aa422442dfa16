import Foundation
import TernCore

extension MigrationPlan.Step {
    /// A checksum of the mapping models the step runs: the base64 SHA-256 of their mapping-file
    /// JSON, so that a store can record which mapping migrated it and notice an edited one.
    ///
    /// Custom policies are named, not hashed: editing a policy's Swift code does not change it.
    ///
    /// - Complexity: O(*n*) in the size of the mappings.
    public var mappingChecksum: String {
        let data = (try? StepMapping(from: from, to: to, passes: mappings).jsonData()) ?? Data()
        return Digest.sha256([UInt8](data)).base64EncodedString()
    }
}
