public import Foundation

/// Core Data's version hashes: one SHA-256 per entity, a checksum and a digest per model.
///
/// A store records the hashes of the model that last wrote it; comparing them with a model's
/// tells whether the store opens as is, or which version of a ``VersionedModel`` wrote it.
/// The hashes are computed exactly as Core Data computes them, so they match the
/// `NSStoreModelVersionHashes` of stores written by Core Data and the `VersionInfo.plist`
/// of compiled models.
///
/// Only what changes the stored layout enters a hash: names, types, optionality, relationship
/// destinations, inverses and counts, inheritance, uniqueness constraints and hash modifiers.
/// Class names, default values, validation rules, indexes, delete rules, renaming identifiers
/// and user info do not.
///
/// ```swift
/// let hashes = model.entityVersionHashes          // ["Recipe": <32 bytes>, …]
/// model.versionChecksum                            // "u970QgYhRHEJGIt0zQr1UhuZL2ZJ1KxBS+B7rkAx0ik="
/// model.isCompatible(with: metadata)               // can this model open the store as is?
/// ```
extension ManagedObjectModel {
    // MARK: - Entity hashes

    /// The version hash of every entity, by entity name: 32 bytes each.
    ///
    /// In a model that does not validate, an unknown parent is left out of its subentity's hash
    /// and an inheritance cycle is cut where it closes.
    ///
    /// - Complexity: O(*n* · (*d* log *n* + *p* log *p*)) for *n* entities of depth up to *d*
    ///   with up to *p* properties along their chains.
    public var entityVersionHashes: [String: Data] {
        var hashes: [String: Data] = [:]
        for entity in entities {
            var visiting: Set<String> = []
            hashes[entity.name] = entityHash(entity, memo: &hashes, visiting: &visiting)
        }
        return hashes
    }

    /// The version hash of one entity (32 bytes).
    ///
    /// - Parameter entityName: The entity's name.
    /// - Returns: The hash, or nil when the model has no such entity.
    /// - Complexity: O(*d* (*d* log *n* + *p* log *p*)) for an entity of depth *d* with *p*
    ///   properties along its chain.
    public func versionHash(ofEntity entityName: String) -> Data? {
        guard let entity = entity(named: entityName) else { return nil }
        var memo: [String: Data] = [:]
        var visiting: Set<String> = []
        return entityHash(entity, memo: &memo, visiting: &visiting)
    }

    /// The version hash of each stored property of an entity, own and inherited, by name.
    ///
    /// These are the hashes the entity's hash is made of; comparing them between two versions
    /// tells which properties changed. Transient properties and fetched properties are left out.
    ///
    /// - Parameter entityName: The entity's name.
    /// - Returns: The hashes (32 bytes each); empty for an unknown entity.
    /// - Complexity: O(*d* log *n* + *p* log *p*) for an entity of depth *d* with *p* properties
    ///   along its chain.
    public func propertyVersionHashes(ofEntity entityName: String) -> [String: Data] {
        Dictionary(uniqueKeysWithValues: storedPropertyHashes(of: entityName))
    }

    // MARK: - Model checksum and digest

    /// The model's version checksum, base64: SHA-256 over the entity hashes in entity-name order.
    ///
    /// Core Data records it as `NSStoreModelVersionChecksumKey` in store metadata and in
    /// `VersionInfo.plist` (`NSManagedObjectModel_VersionChecksums`).
    ///
    /// - Complexity: That of ``entityVersionHashes``.
    public var versionChecksum: String {
        var input = DigestInput()
        for (_, hash) in hashesInNameOrder() { input.append(hash) }
        return input.sha256.base64EncodedString()
    }

    /// The digest of the model's version hashes, base64: SHA-512 over each entity's name
    /// followed by its hash, in entity-name order.
    ///
    /// Core Data records it as `NSStoreModelVersionHashesDigest` in store metadata.
    ///
    /// - Complexity: That of ``entityVersionHashes``.
    public var versionHashesDigest: String {
        var input = DigestInput()
        for (name, hash) in hashesInNameOrder() {
            input.append(name)
            input.append(hash)
        }
        return input.sha512.base64EncodedString()
    }

    // MARK: - Comparing with a store

    /// Whether a store written with these metadata can be opened with this model as is.
    ///
    /// - Parameter metadata: A store's metadata.
    /// - Returns: `true` when the store records the same set of entities as the model, each with
    ///   the model's hash.
    /// - Complexity: That of ``entityVersionHashes``.
    public func isCompatible(with metadata: StoreMetadata) -> Bool {
        entityVersionHashes == metadata.versionHashes
    }

    // MARK: - Non public

    /// Property-part flags: optional, transient, read-only (derived attributes).
    private static func propertyPart(
        name: String, isOptional: Bool, isTransient: Bool, isReadOnly: Bool, modifier: String?
    ) -> Data {
        var input = DigestInput()
        input.append(name)
        let flags = (isOptional ? 1 : 0) | (isTransient ? 2 : 0) | (isReadOnly ? 4 : 0)
        input.append(littleEndian: UInt16(flags))
        if let modifier { input.append(modifier) }
        return input.sha256
    }

    /// The hash of an attribute; a derived attribute hashes only its expression.
    static func versionHash(of attribute: AttributeDescription) -> Data {
        var input = DigestInput()
        if let expression = attribute.derivationExpression {
            input.append(canonicalDerivation(expression))
            return input.sha256
        }
        input.append(
            propertyPart(
                name: attribute.name, isOptional: attribute.isOptional, isTransient: attribute.isTransient,
                isReadOnly: false, modifier: attribute.versionHashModifier))
        input.append(littleEndian: attribute.type.rawValue)
        if attribute.allowsExternalBinaryDataStorage { input.append(littleEndian: UInt8(1)) }
        if attribute.preservesValueInHistoryOnDeletion { input.append(littleEndian: UInt8(1)) }
        return input.sha256
    }

    /// The hash of a relationship declared by `entityName` (which decides whether it is its
    /// own inverse, in which case the inverse name is left out).
    static func versionHash(of relationship: RelationshipDescription, declaredBy entityName: String) -> Data {
        var input = DigestInput()
        input.append(
            propertyPart(
                name: relationship.name, isOptional: relationship.isOptional,
                isTransient: relationship.isTransient, isReadOnly: false,
                modifier: relationship.versionHashModifier))
        input.append(relationship.destinationEntityName)
        let isOwnInverse =
            relationship.inverseName == relationship.name && relationship.destinationEntityName == entityName
        if let inverse = relationship.inverseName, !isOwnInverse { input.append(inverse) }
        input.append(littleEndian: Int32(clamping: relationship.maxCount))
        input.append(littleEndian: Int32(clamping: relationship.minCount))
        if relationship.isOrdered { input.append(littleEndian: UInt16(1)) }
        return input.sha256
    }

    /// The stored properties' hashes along an entity's chain, nearest definition winning,
    /// sorted by name byte-wise.
    private func storedPropertyHashes(of entityName: String) -> [(name: String, hash: Data)] {
        var byName: [String: Data] = [:]
        var shadowed: Set<String> = []
        for entity in chain(of: entityName) {
            for attribute in entity.attributes where shadowed.insert(attribute.name).inserted {
                if !attribute.isTransient { byName[attribute.name] = Self.versionHash(of: attribute) }
            }
            for relationship in entity.relationships where shadowed.insert(relationship.name).inserted {
                if !relationship.isTransient {
                    byName[relationship.name] = Self.versionHash(of: relationship, declaredBy: entity.name)
                }
            }
        }
        return byName.map { (name: $0.key, hash: $0.value) }.sorted {
            $0.name.utf8.lexicographicallyPrecedes($1.name.utf8)
        }
    }

    /// The hash of an entity, reusing and filling `memo`; `visiting` cuts inheritance cycles.
    private func entityHash(
        _ entity: EntityDescription, memo: inout [String: Data], visiting: inout Set<String>
    ) -> Data {
        if let known = memo[entity.name] { return known }
        visiting.insert(entity.name)
        var input = DigestInput()
        input.append(entity.name)
        input.append(littleEndian: UInt8(entity.isAbstract ? 1 : 0))
        if let parentName = entity.parentName, !visiting.contains(parentName),
            let parent = self.entity(named: parentName)
        {
            input.append(entityHash(parent, memo: &memo, visiting: &visiting))
        }
        for (_, hash) in storedPropertyHashes(of: entity.name) { input.append(hash) }
        if let modifier = entity.versionHashModifier { input.append(modifier) }
        let constraints = entity.uniquenessConstraints.filter { !$0.isEmpty }.map { $0.joined(separator: ".") }
        for constraint in constraints.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            input.append(constraint)
        }
        let hash = input.sha256
        memo[entity.name] = hash
        return hash
    }

    /// The entity hashes sorted by entity name byte-wise.
    private func hashesInNameOrder() -> [(name: String, hash: Data)] {
        entityVersionHashes.map { (name: $0.key, hash: $0.value) }
            .sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }

    /// A derivation expression as Core Data prints it, which is the text it hashes: Xcode's
    /// `items.@count` is the function `count:(items)`. Other texts are hashed as written.
    static func canonicalDerivation(_ expression: String) -> String {
        let text = expression.trimmingCharacters(in: .whitespaces)
        let suffix = ".@count"
        guard text.hasSuffix(suffix) else { return expression }
        let path = text.dropLast(suffix.count)
        let isKeyPath = path.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { part in
            guard let first = part.first, first.isLetter || first == "_" else { return false }
            return part.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
        }
        return isKeyPath ? "count:(\(path))" : expression
    }
}
