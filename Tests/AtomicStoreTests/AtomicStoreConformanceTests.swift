import Foundation
import TernBinaryStore
import TernCore
import TernTestSupport
import TernXMLStore
import Testing

/// Stores of both atomic formats, each a new file in a folder that lives as long as the tests.
enum AtomicStoreFactories {
    static let folder = Result { try TemporaryDirectory() }

    static func newFile(_ suffix: String) throws -> URL {
        try folder.get().path("store-\(UUID().uuidString).\(suffix)")
    }

    static let binary = StoreFactory("binary") { model in try BinaryStore(at: newFile("ternbin"), model: model) }
    static let xml = StoreFactory("XML") { model in try XMLStore(at: newFile("xml"), model: model) }
}

@Suite struct AtomicStoreConformanceTests {
    @Test(arguments: [AtomicStoreFactories.binary, AtomicStoreFactories.xml], StoreConformance.Behaviour.allCases)
    func conforms(factory: StoreFactory, behaviour: StoreConformance.Behaviour) async throws {
        try await StoreConformance(factory).run(behaviour)
    }
}
