package import TernCore

/// An entity mapping whose stage 1 a SQL engine can run as one `INSERT … SELECT` (#24): every
/// attribute mapping is a value with an SQL form, worked out once from the mapping, with its type.
///
/// The forms are the ones whose SQL result is the Swift one for every value the statement
/// accepts; the engine's statement hands any other row back to Swift (see
/// ``BulkMappingEngine``). ``analyze(_:sourceModel:destinationModel:)`` says why a mapping has
/// no SQL form, for `tern plan`.
///
/// ```swift
/// switch BulkMapping.analyze(mapping, sourceModel: v1, destinationModel: v2) {
/// case .success(let bulk): bulk.attributes        // [("id", .attribute("id", .integer64)), …]
/// case .failure(let reason): print(reason.text)   // "printedDate: lowercase has no SQL form here"
/// }
/// ```
package struct BulkMapping: Sendable {
    /// A value with an SQL form.
    package indirect enum Value: Sendable, Equatable {
        /// A stored attribute of the source entity, read from its column.
        case attribute(String, AttributeType)
        /// A constant (nil for NULL).
        case literal(AttributeValue?)
        /// `formatDate(date, format)` with a format ``DatePattern`` writes, as a `strftime` format.
        case formatDate(Value, strftime: String)
        /// `timeInterval(date)`: the seconds since 2001 as a double.
        case timeInterval(Value)

        /// The attribute type of the value; nil for NULL.
        package var type: AttributeType? {
            switch self {
            case .attribute(_, let type): type
            case .literal(let value): value.flatMap(BulkMapping.type(of:))
            case .formatDate: .string
            case .timeInterval: .double
            }
        }
    }

    /// Why a mapping has no SQL form.
    package struct Reason: Error, Sendable, Equatable {
        /// What keeps it in Swift, in a few words.
        package var text: String
    }

    /// The entity mapping.
    package let mapping: EntityMapping
    /// The source entity.
    package let sourceEntity: String
    /// The destination entity.
    package let destinationEntity: String
    /// Each destination attribute the mapping sets, with its value.
    package let attributes: [(name: String, value: Value)]

    /// Works out the SQL form of a default-policy entity mapping's stage 1.
    ///
    /// - Parameters:
    ///   - mapping: The entity mapping (its policy is not looked at: callers ask only for
    ///     default-policy mappings).
    ///   - sourceModel: The source model.
    ///   - destinationModel: The destination model.
    /// - Returns: The SQL form, or the reason there is none.
    /// - Complexity: O(*n*) in the size of the attribute mappings.
    package static func analyze(
        _ mapping: EntityMapping, sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel
    ) -> Result<BulkMapping, Reason> {
        guard mapping.kind == .transform || mapping.kind == .copy, let source = mapping.sourceEntityName,
            let destination = mapping.destinationEntityName
        else { return .failure(Reason(text: "it creates no objects from a source entity")) }
        guard mapping.sourceFilter == nil else { return .failure(Reason(text: "it has a filter")) }
        guard destinationModel.entity(named: destination)?.isAbstract == false else {
            return .failure(Reason(text: "its destination entity is abstract"))
        }
        var attributes: [(name: String, value: Value)] = []
        for property in mapping.effectiveAttributeMappings(in: destinationModel) {
            guard let expression = property.valueExpression else { continue }
            guard let attribute = destinationModel.attribute(named: property.name, inEntity: destination) else {
                return .failure(Reason(text: "\(destination) has no attribute \(property.name)"))
            }
            if attribute.isTransient || attribute.isDerived { continue }
            guard let value = Self.value(of: expression, source: source, in: sourceModel) else {
                return .failure(Reason(text: "\(property.name): \(expression) has no SQL form here"))
            }
            guard Self.stores(value, as: attribute.type) else {
                return .failure(
                    Reason(text: "\(property.name): its value needs a conversion to \(attribute.type.xcodeName)"))
            }
            attributes.append((property.name, value))
        }
        return .success(
            BulkMapping(mapping: mapping, sourceEntity: source, destinationEntity: destination, attributes: attributes))
    }

    // MARK: - Non public

    private init(
        mapping: EntityMapping, sourceEntity: String, destinationEntity: String,
        attributes: [(name: String, value: Value)]
    ) {
        self.mapping = mapping
        self.sourceEntity = sourceEntity
        self.destinationEntity = destinationEntity
        self.attributes = attributes
    }

    /// The types whose values SQL reads and writes as Swift does (not Float, Decimal, binary…).
    private static let columnTypes: Set<AttributeType> = [
        .integer16, .integer32, .integer64, .double, .string, .boolean, .date,
    ]

    /// The SQL form of an expression, or nil.
    private static func value(of expression: ValueExpression, source: String, in model: ManagedObjectModel) -> Value? {
        switch expression {
        case .source(let keyPath):
            guard keyPath.count == 1, let attribute = model.attribute(named: keyPath[0], inEntity: source),
                !attribute.isTransient, !attribute.isDerived, columnTypes.contains(attribute.type)
            else { return nil }
            return .attribute(attribute.name, attribute.type)
        case .literal(let value):
            guard let value else { return .literal(nil) }
            return type(of: value) == nil ? nil : .literal(value)
        case .call(.formatDate, let arguments) where arguments.count == 2:
            guard case .literal(.string(let format)?) = arguments[1], let pattern = DatePattern(format),
                let date = Self.value(of: arguments[0], source: source, in: model), case .attribute(_, .date) = date
            else { return nil }
            return .formatDate(date, strftime: pattern.strftimeFormat)
        case .call(.timeInterval, let arguments) where arguments.count == 1:
            guard let date = Self.value(of: arguments[0], source: source, in: model), case .attribute(_, .date) = date
            else { return nil }
            return .timeInterval(date)
        default:
            return nil
        }
    }

    /// The type of a literal that SQL stores as Swift does; nil for others.
    fileprivate static func type(of value: AttributeValue) -> AttributeType? {
        switch value {
        case .integer: .integer64
        case .double: .double
        case .string: .string
        case .bool: .boolean
        case .date: .date
        default: nil
        }
    }

    /// Whether a value is stored in an attribute of a type without a conversion that SQL could
    /// do differently: the same type, a narrower integer into a wider one, an integer into a double.
    private static func stores(_ value: Value, as type: AttributeType) -> Bool {
        guard columnTypes.contains(type) else { return false }
        guard let valueType = value.type else { return true }
        if case .literal(.integer(let number)?) = value, type.isInteger { return type.integerRange.contains(number) }
        switch (valueType, type) {
        case (.integer16, .integer16), (.integer16, .integer32), (.integer16, .integer64), (.integer32, .integer32),
            (.integer32, .integer64), (.integer64, .integer64):
            return true
        case (.integer16, .double), (.integer32, .double), (.integer64, .double):
            return true
        default:
            return valueType == type
        }
    }
}

extension AttributeType {
    /// Whether the type is one of the integer types.
    fileprivate var isInteger: Bool { self == .integer16 || self == .integer32 || self == .integer64 }
}

/// An engine that can run stage 1 of a ``BulkMapping`` in one statement: ``MappingRunner`` asks it
/// for the first default-policy mappings of each walk.
package protocol BulkMappingEngine: MigrationManager {
    /// Runs stage 1 of a mapping in bulk: one destination object per source object, in source
    /// key order, with the keys the Swift path would give, each associated with its source.
    ///
    /// - Parameter bulk: The mapping's SQL form.
    /// - Returns: False, having changed nothing, when the engine declines (keys kept, a value
    ///   the statement cannot handle as Swift does): the runner then runs the mapping in Swift.
    /// - Throws: ``MigrationError`` when the statement fails for another reason.
    func createDestinationInstancesInBulk(_ bulk: BulkMapping) throws(MigrationError) -> Bool
}
