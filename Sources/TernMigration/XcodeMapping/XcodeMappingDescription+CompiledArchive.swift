import Foundation
import TernCore
import TernFormats

/// Reading compiled mapping models: the `.cdm` files Xcode's mapping compiler writes into an
/// app's bundle, `NSKeyedArchiver` archives of an `NSMappingModel`.
///
/// The archive's root has `NSEntityMappings`; each `NSEntityMapping` has `NSMappingName`,
/// `NSMappingType`, `NSSourceEntityName`, `NSSourceEntityVersionHash`,
/// `NSDestinationEntityName`, `NSDestinationEntityVersionHash`, `NSSourceExpression` (a
/// `FETCH` whose request names the filter predicate), `NSEntityMigrationPolicyClassName`,
/// `NSUserInfo`, `NSAttributeMappings` and `NSRelationshipMappings`; each `NSPropertyMapping`
/// has `NSDestinationPropertyName`, `NSValueExpression` and `NSUserInfo`.
extension XcodeMappingDescription {
    /// The selector of the fetch request a compiled source expression makes.
    static let fetchRequestSelector = "fetchRequestForSourceEntityNamed:predicateString:"

    /// Reads a compiled mapping model.
    ///
    /// - Parameters:
    ///   - compiledArchive: The `.cdm` file's bytes.
    ///   - name: The mapping model's name.
    ///   - path: The file's path, for messages.
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/unreadableMappingFile`` when
    ///   the bytes are not a keyed archive of an `NSMappingModel`.
    /// - Complexity: O(*n*) in the size of the archive.
    init(compiledArchive data: Data, name: String, path: String) throws(MigrationError) {
        do {
            let root = try KeyedArchive(data: data).rootObject()
            guard root.isKind(of: "NSMappingModel") else {
                throw MigrationError.unreadableXcodeMapping(
                    "the archive holds a \(root.className), not an NSMappingModel", path: path)
            }
            var mappings: [EntityMappingDescription] = []
            for element in try root.value(forKey: "NSEntityMappings").elements() ?? [] {
                guard let object = element.object, object.isKind(of: "NSEntityMapping") else { continue }
                mappings.append(try Self.entityMapping(object))
            }
            self.init(name: name, path: path, sourceModelPath: nil, destinationModelPath: nil, entityMappings: mappings)
        } catch let error as MigrationError {
            throw error
        } catch {
            throw MigrationError.unreadableXcodeMapping(
                "it is not a compiled mapping model (\(Self.reason(error)))", path: path)
        }
    }

    // MARK: - Non public

    private static func entityMapping(_ object: ArchivedObject) throws -> EntityMappingDescription {
        let rawType = Int(try object.integer(forKey: "NSMappingType") ?? 0)
        var mapping = EntityMappingDescription(
            name: try object.string(forKey: "NSMappingName"),
            type: EntityMappingDescription.MappingType(rawValue: rawType) ?? .undefined,
            sourceEntityName: try object.string(forKey: "NSSourceEntityName"),
            sourceEntityVersionHash: try data(object.value(forKey: "NSSourceEntityVersionHash")),
            destinationEntityName: try object.string(forKey: "NSDestinationEntityName"),
            destinationEntityVersionHash: try data(object.value(forKey: "NSDestinationEntityVersionHash")),
            filterPredicate: nil,
            policyClassName: try object.string(forKey: "NSEntityMigrationPolicyClassName"),
            userInfo: try userInfo(object.value(forKey: "NSUserInfo")))
        if let source = try object.object(forKey: "NSSourceExpression") {
            mapping.filterPredicate = filterPredicate(of: try ExpressionNode(source))
        }
        mapping.attributeMappings = try propertyMappings(object.value(forKey: "NSAttributeMappings"))
        mapping.relationshipMappings = try propertyMappings(object.value(forKey: "NSRelationshipMappings"))
        return mapping
    }

    private static func propertyMappings(_ value: ArchivedValue) throws -> [PropertyMappingDescription] {
        var result: [PropertyMappingDescription] = []
        for element in try value.elements() ?? [] {
            guard let object = element.object, let name = try object.string(forKey: "NSDestinationPropertyName") else {
                continue
            }
            let expression = try object.object(forKey: "NSValueExpression").map { try ExpressionNode($0) }
            result.append(
                PropertyMappingDescription(
                    name: name, expression: expression, userInfo: try userInfo(object.value(forKey: "NSUserInfo"))))
        }
        return result
    }

    /// The predicate text of a compiled source expression; nil for `TRUEPREDICATE` or another form.
    static func filterPredicate(of source: ExpressionNode) -> String? {
        var request = source
        if case .fetch(let inner, _, _) = source { request = inner }
        guard case .function(.variable("manager"), fetchRequestSelector, let arguments) = request, arguments.count == 2,
            case .constant(.string(let predicate)) = arguments[1]
        else { return nil }
        let trimmed = predicate.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty || trimmed == "TRUEPREDICATE" ? nil : trimmed
    }

    private static func data(_ value: ArchivedValue) throws -> Data? {
        switch value {
        case .data(let bytes): return bytes
        case .object(let object):
            if case .data(let bytes) = try object.value(forKey: "NS.data") { return bytes }
            return nil
        default: return nil
        }
    }

    /// A user info dictionary's entries as text (numbers and Booleans written out).
    static func userInfo(_ value: ArchivedValue) throws -> [String: String] {
        var result: [String: String] = [:]
        for (key, entry) in try value.stringKeyedEntries() ?? [] {
            switch entry {
            case .bool(let flag): result[key] = flag ? "YES" : "NO"
            case .integer(let number): result[key] = String(number)
            case .real(let number): result[key] = String(number)
            default: result[key] = try entry.string() ?? ""
            }
        }
        return result
    }

    /// The message of an error from the archive reader.
    static func reason(_ error: any Error) -> String {
        (error as? TernError)?.message ?? String(describing: error)
    }
}

extension MigrationError {
    /// A mapping model file that cannot be read.
    static func unreadableXcodeMapping(_ reason: String, path: String) -> MigrationError {
        var error = MigrationError(
            .unreadableMappingFile,
            "The Xcode mapping model cannot be read: \(reason); open it in Xcode and save it again")
        error.path = path
        return error
    }
}
