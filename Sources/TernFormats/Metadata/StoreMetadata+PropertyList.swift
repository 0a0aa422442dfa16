import Foundation
package import TernCore

extension StoreMetadata {
    /// The keys of Core Data's metadata dictionary that have typed properties.
    package enum Key {
        package static let storeType = "NSStoreType"
        package static let storeUUID = "NSStoreUUID"
        package static let versionHashes = "NSStoreModelVersionHashes"
        package static let versionIdentifiers = "NSStoreModelVersionIdentifiers"
        package static let hashesVersion = "NSStoreModelVersionHashesVersion"
        package static let checksum = "NSStoreModelVersionChecksumKey"
        package static let digest = "NSStoreModelVersionHashesDigest"
        package static let frameworkVersion = "NSPersistenceFrameworkVersion"
        package static let autoVacuumLevel = "_NSAutoVacuumLevel"
    }

    /// Reads metadata from the `Z_METADATA` dictionary and UUID.
    ///
    /// Typed keys become properties; every other key is kept in ``applicationKeys``.
    ///
    /// - Parameters:
    ///   - dictionary: The decoded `Z_PLIST`.
    ///   - uuid: `Z_UUID`.
    /// - Returns: nil when a typed key holds a value of the wrong type.
    package init?(propertyList dictionary: [String: PropertyListValue], uuid: String) {
        var others = dictionary
        var storeType = "SQLite"
        if let value = others.removeValue(forKey: Key.storeType) {
            guard case .string(let type) = value else { return nil }
            storeType = type
        }
        // NSStoreUUID lives in Z_UUID; a copy in the dictionary would only drift from it.
        others.removeValue(forKey: Key.storeUUID)
        self.init(storeType: storeType, uuid: uuid)
        if let value = others.removeValue(forKey: Key.versionHashes) {
            guard case .dictionary(let hashes) = value else { return nil }
            for (entity, hash) in hashes {
                guard case .data(let bytes) = hash else { return nil }
                versionHashes[entity] = bytes
            }
        }
        if let value = others.removeValue(forKey: Key.versionIdentifiers) {
            guard case .array(let identifiers) = value else { return nil }
            for identifier in identifiers {
                switch identifier {
                case .string(let text): versionIdentifiers.append(text)
                case .integer(let number): versionIdentifiers.append(String(number))
                default: return nil
                }
            }
        }
        if let value = others.removeValue(forKey: Key.hashesVersion) {
            guard case .integer(let version) = value else { return nil }
            hashesVersion = Int(version)
        }
        if let value = others.removeValue(forKey: Key.checksum) {
            guard case .string(let checksum) = value else { return nil }
            modelChecksum = checksum
        }
        if let value = others.removeValue(forKey: Key.digest) {
            guard case .string(let digest) = value else { return nil }
            hashesDigest = digest
        }
        if let value = others.removeValue(forKey: Key.frameworkVersion) {
            switch value {
            case .integer(let version): frameworkVersion = Int(version)
            case .real(let version): frameworkVersion = Int(version)
            default: return nil
            }
        }
        applicationKeys = others
    }

    /// The metadata as Core Data's `Z_PLIST` dictionary (without the UUID, which goes in `Z_UUID`).
    package var propertyList: [String: PropertyListValue] {
        var dictionary = applicationKeys
        dictionary.removeValue(forKey: Key.storeUUID)
        dictionary[Key.storeType] = .string(storeType)
        dictionary[Key.versionHashes] = .dictionary(versionHashes.mapValues { .data($0) })
        dictionary[Key.versionIdentifiers] = .array(versionIdentifiers.map { .string($0) })
        dictionary[Key.hashesVersion] = .integer(Int64(hashesVersion))
        if let modelChecksum { dictionary[Key.checksum] = .string(modelChecksum) }
        if let hashesDigest { dictionary[Key.digest] = .string(hashesDigest) }
        if let frameworkVersion { dictionary[Key.frameworkVersion] = .integer(Int64(frameworkVersion)) }
        return dictionary
    }
}
