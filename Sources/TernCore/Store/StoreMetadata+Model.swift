extension StoreMetadata {
    /// The metadata of a new store written with a model: its type, a UUID, the model's entity
    /// version hashes, version identifiers, checksum and hashes digest.
    ///
    /// - Parameters:
    ///   - kind: The store's type.
    ///   - uuid: The store's UUID.
    ///   - model: The model the store is created with.
    /// - Complexity: O(*n*) in the size of the model.
    package init(newStoreOf kind: StoreKind, uuid: String, model: ManagedObjectModel) {
        self.init(storeType: kind.rawValue, uuid: uuid, versionHashes: model.entityVersionHashes)
        versionIdentifiers = model.versionIdentifiers
        modelChecksum = model.versionChecksum
        hashesDigest = model.versionHashesDigest
    }
}
