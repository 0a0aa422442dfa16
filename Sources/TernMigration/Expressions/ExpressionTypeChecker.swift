import TernCore

/// The static type of a value expression, as far as the models tell it.
enum ExpressionType: Equatable {
    /// The literal `nil`: fits anything.
    case null
    /// Not known before evaluation: fits any attribute.
    case unknown
    /// An integer or a double (`number()`).
    case number
    case integer, double, decimal, string, bool, date, data, uuid, uri
    /// Source objects of an entity, from `$source` or `$source.relationship`.
    case objects(entity: String, toMany: Bool)
    /// Destination instances of an entity (nil when any mapping may have made them).
    case instances(entity: String?, toMany: Bool)

    /// The type of values of an attribute type.
    init(_ type: AttributeType) {
        switch type {
        case .integer16, .integer32, .integer64: self = .integer
        case .double, .float: self = .double
        case .decimal: self = .decimal
        case .string: self = .string
        case .boolean: self = .bool
        case .date: self = .date
        case .binary, .transformable: self = .data
        case .uuid: self = .uuid
        case .uri: self = .uri
        case .undefined, .objectID, .composite: self = .unknown
        }
    }

    /// The type of a literal.
    init(_ value: AttributeValue?) {
        switch value {
        case nil: self = .null
        case .integer: self = .integer
        case .double: self = .double
        case .decimal: self = .decimal
        case .string: self = .string
        case .bool: self = .bool
        case .date: self = .date
        case .data: self = .data
        case .uuid: self = .uuid
        case .uri: self = .uri
        }
    }

    var isNumeric: Bool { [.number, .integer, .double, .decimal, .unknown, .null].contains(self) }
    var isScalar: Bool {
        switch self {
        case .objects, .instances: false
        default: true
        }
    }

    /// A short name for messages.
    var name: String {
        switch self {
        case .null: "nil"
        case .unknown: "a value"
        case .number, .integer, .double, .decimal: "a number"
        case .string: "text"
        case .bool: "a Boolean"
        case .date: "a date"
        case .data: "data"
        case .uuid: "a UUID"
        case .uri: "a URI"
        case .objects(let entity, let toMany): toMany ? "\(entity) objects" : "a \(entity) object"
        case .instances: "destination instances"
        }
    }

    /// Whether a value of this type can be stored in an attribute of that type (numbers convert).
    func fits(_ attributeType: AttributeType) -> Bool {
        let target = ExpressionType(attributeType)
        switch (self, target) {
        case (.null, _), (.unknown, _), (_, .unknown): return true
        case _ where isNumeric && target.isNumeric: return true
        case (.bool, .integer), (.integer, .bool): return true
        default: return self == target
        }
    }
}

/// Checks value expressions against the source and destination models.
struct ExpressionTypeChecker {
    /// The source model, for `$source` key paths.
    var sourceModel: ManagedObjectModel
    /// The source entity, nil in an add mapping.
    var sourceEntity: String?
    /// The entity mappings that `destinationInstances` may name, with their destination entities.
    var mappingDestinations: [String: String?]
    /// The offset of each node of the expression being checked, in pre-order, if known.
    var positions: [Int] = []
    private var node = 0

    init(sourceModel: ManagedObjectModel, sourceEntity: String?, mappingDestinations: [String: String?]) {
        self.sourceModel = sourceModel
        self.sourceEntity = sourceEntity
        self.mappingDestinations = mappingDestinations
    }

    /// The type of an expression, or the first problem in it.
    mutating func check(_ expression: ValueExpression, positions: [Int]) throws(MigrationError) -> ExpressionType {
        self.positions = positions
        node = 0
        return try type(of: expression)
    }

    // MARK: - Non public

    private mutating func type(of expression: ValueExpression) throws(MigrationError) -> ExpressionType {
        let position = node < positions.count ? positions[node] : nil
        node += 1
        switch expression {
        case .literal(let value):
            return ExpressionType(value)
        case .source(let path):
            guard let sourceEntity else {
                throw problem("$source is not available in a mapping without a source entity", position)
            }
            return try keyPathType(path, from: sourceEntity, position: position)
        case .negate(let operand):
            let operandType = try type(of: operand)
            guard operandType.isNumeric else { throw problem("'-' needs a number, not \(operandType.name)", position) }
            return operandType == .null ? .null : operandType
        case .arithmetic(let op, let lhs, let rhs):
            let left = try type(of: lhs)
            let right = try type(of: rhs)
            if left == .date, op == .add || op == .subtract, right.isNumeric { return .date }
            guard left.isNumeric, right.isNumeric else {
                let hint = left == .string || right == .string ? "; join text with concat()" : ""
                throw problem("'\(op.rawValue)' needs numbers, not \(left.name) and \(right.name)\(hint)", position)
            }
            if op == .divide { return .double }
            if left == .unknown || right == .unknown { return .unknown }
            if left == .decimal || right == .decimal { return .decimal }
            if left == .integer && right == .integer { return .integer }
            if left == .null || right == .null { return left == .null ? right : left }
            return left == .double || right == .double ? .double : .number
        case .call(let function, let arguments):
            return try callType(function, arguments, position)
        }
    }

    private mutating func callType(
        _ function: ValueExpression.Function, _ arguments: [ValueExpression], _ position: Int?
    ) throws(MigrationError) -> ExpressionType {
        if function == .destinationInstances { return try instancesType(arguments, position) }
        if function == .policy {
            guard arguments.first?.stringLiteral != nil else {
                throw problem("the first argument of policy() must be the selector's name in quotes", position)
            }
            for argument in arguments.dropFirst() { _ = try type(of: argument) }
            return .unknown
        }
        var types: [ExpressionType] = []
        for argument in arguments { types.append(try type(of: argument)) }
        for (offset, argumentType) in types.enumerated() where !argumentType.isScalar {
            throw problem(
                "argument \(offset + 1) of \(function.rawValue)() is \(argumentType.name); it needs a value", position)
        }
        func require(_ index: Int, _ allowed: [ExpressionType], _ what: String) throws(MigrationError) {
            let argumentType = types[index]
            guard argumentType == .null || argumentType == .unknown || allowed.contains(argumentType) else {
                throw problem(
                    "argument \(index + 1) of \(function.rawValue)() must be \(what), not \(argumentType.name)",
                    position)
            }
        }
        let numbers: [ExpressionType] = [.number, .integer, .double, .decimal]
        switch function {
        case .string, .concat: return .string
        case .number, .integer, .double:
            try require(0, numbers + [.string, .bool, .date], "a number, text, a Boolean or a date")
            return function == .integer ? .integer : function == .double ? .double : .number
        case .date:
            try require(0, numbers + [.string, .date], "a number of seconds, ISO 8601 text or a date")
            return .date
        case .formatDate:
            try require(0, [.date], "a date")
            try require(1, [.string], "a date format")
            return .string
        case .parseDate:
            try require(0, [.string], "text")
            try require(1, [.string], "a date format")
            return .date
        case .timeInterval:
            try require(0, [.date], "a date")
            return .double
        case .lowercase, .uppercase, .trim:
            try require(0, [.string], "text")
            return .string
        case .coalesce:
            let known = types.filter { $0 != .null }
            guard let first = known.first else { return .null }
            return known.allSatisfy { $0 == first } ? first : .unknown
        case .now: return .date
        case .uuid: return .uuid
        case .destinationInstances, .policy: return .unknown
        }
    }

    private mutating func instancesType(_ arguments: [ValueExpression], _ position: Int?) throws(MigrationError)
        -> ExpressionType
    {
        var entity: String?
        if arguments.count == 2 {
            node += 1
            guard case .literal(.string(let name)?) = arguments[0] else {
                throw problem("the first argument of destinationInstances() must be a mapping name in quotes", position)
            }
            guard let destination = mappingDestinations[name] else {
                let known = mappingDestinations.keys.sorted().joined(separator: ", ")
                throw problem(
                    "destinationInstances() names the unknown entity mapping '\(name)'; known: \(known)", position)
            }
            entity = destination
        }
        guard let last = arguments.last else { return .instances(entity: entity, toMany: false) }
        switch try type(of: last) {
        case .objects(_, let toMany): return .instances(entity: entity, toMany: toMany)
        case .null: return .null
        case let other:
            throw problem(
                "destinationInstances() needs source objects such as $source.owner, not \(other.name)", position)
        }
    }

    /// The type at the end of a key path, following relationships.
    private func keyPathType(_ path: [String], from entity: String, position: Int?) throws(MigrationError)
        -> ExpressionType
    {
        var current = entity
        var toMany = false
        var union = false
        for (offset, name) in path.enumerated() {
            let written = (["$source"] + path[...offset]).joined(separator: ".")
            let isLast = offset == path.count - 1
            if ValueExpression.unionOperators.contains(name) {
                guard toMany, !isLast else {
                    throw problem(
                        "\(written): \(name) goes between a to-many relationship and a relationship of its objects",
                        position)
                }
                union = true
                continue
            }
            switch sourceModel.property(named: name, inEntity: current) {
            case .attribute(let attribute)?:
                guard isLast else { throw problem("\(written) is an attribute; nothing follows it", position) }
                guard !union else {
                    throw problem("\(written): a union gives objects; it cannot end in an attribute", position)
                }
                guard !attribute.isTransient else {
                    throw problem("\(current).\(name) is transient: the store has no value for it", position)
                }
                return ExpressionType(attribute.type)
            case .relationship(let relationship)?:
                guard !toMany || union else {
                    throw problem(
                        "\(written) goes on after a to-many relationship; only to-one ones can be followed, or put "
                            + "@distinctUnionOfSets before the relationship of its objects", position)
                }
                toMany = toMany || relationship.isToMany
                union = false
                current = relationship.destinationEntityName
            case .fetchedProperty?:
                throw problem("\(written) is a fetched property, which the store does not keep", position)
            case nil:
                throw problem("unknown key path \(written): \(current) has no property '\(name)'", position)
            }
        }
        return .objects(entity: current, toMany: toMany)
    }

    private func problem(_ message: String, _ position: Int?) -> MigrationError {
        MigrationError(.invalidMapping, message, position: position)
    }
}
