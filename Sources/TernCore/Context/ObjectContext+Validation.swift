import Foundation

/// Save-time validation: required values, ranges, lengths, patterns, relationship counts,
/// deny rules and uniqueness among the context's objects.
extension ObjectContext {
    // MARK: - Non public

    /// Every failure of the changed objects, one per object and property.
    func validationFailures() -> [TernError] {
        // Failures are listed in the order of the objects' IDs; only objects that fail, and
        // those with uniqueness constraints, are sorted (each ID's text made once).
        var failing: [(String, [TernError])] = []
        var constrained: [ManagedObject] = []
        for object in graph.changed.values where object.isLoaded {
            var failures: [TernError] = []
            if object.isDeleted {
                if !object.isInserted { failures = denyFailures(of: object) }
            } else {
                if object.isInserted || object.hasChanges {
                    failures = attributeFailures(of: object) + relationshipFailures(of: object)
                }
                if !object.schema.uniquenessConstraints.isEmpty { constrained.append(object) }
            }
            if !failures.isEmpty { failing.append((object.objectID.description, failures)) }
        }
        let objects = constrained.map { ($0.objectID.description, $0) }.sorted { $0.0 < $1.0 }.map(\.1)
        return failing.sorted { $0.0 < $1.0 }.flatMap(\.1) + uniquenessFailures(among: objects)
    }

    private func failure(_ object: ManagedObject, _ property: String, _ message: String) -> TernError {
        TernError(
            .validationFailed, "\(object.schema.name).\(property) of \(object.objectID) \(message)",
            objectID: object.objectID, property: property)
    }

    private func denyFailures(of object: ManagedObject) -> [TernError] {
        object.schema.relationships.values.filter { $0.deleteRule == .deny }.sorted { $0.name < $1.name }.compactMap {
            relationship in
            let targets =
                relationship.isToMany
                ? object.toMany[relationship.name] ?? [] : object.toOne[relationship.name].map { [$0] } ?? []
            let live = targets.filter { !(graph.registeredObject(for: $0)?.isDeleted ?? false) }
            return live.isEmpty
                ? nil : failure(object, relationship.name, "denies the deletion while it holds \(live.count) object(s)")
        }
    }

    private func attributeFailures(of object: ManagedObject) -> [TernError] {
        let attributes = object.schema.attributes.values.lazy.filter { !$0.isDerived }
        let values = object.values
        return Self.attributeFailures(of: { values[$0] }, attributes: attributes) { failure(object, $0, $1) }
    }

    /// The failures of attribute values: required ones missing, and each value's problem.
    ///
    /// - Parameters:
    ///   - value: The value of an attribute by name, nil when it is nil.
    ///   - attributes: The attributes to check, in any order.
    ///   - failure: Makes the error for an attribute name and a message.
    /// - Returns: The failures, by attribute name.
    package static func attributeFailures(
        of value: (String) -> AttributeValue?, attributes: some Sequence<AttributeDescription>,
        failure: (String, String) -> TernError
    ) -> [TernError] {
        // Failures by attribute name; the attributes are sorted only when some fail.
        var failures: [(String, TernError)] = []
        for attribute in attributes {
            guard let value = value(attribute.name) else {
                if !attribute.isOptional { failures.append((attribute.name, failure(attribute.name, "is required"))) }
                continue
            }
            if let problem = Self.problem(with: value, for: attribute) {
                failures.append((attribute.name, failure(attribute.name, problem)))
            }
        }
        return failures.count < 2 ? failures.map(\.1) : failures.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// What is wrong with a non-nil value, or nil when it is valid.
    static func problem(with value: AttributeValue, for attribute: AttributeDescription) -> String? {
        typeProblem(with: value, for: attribute) ?? ruleProblem(with: value, for: attribute)
    }

    /// Why a value does not fit its attribute's type or integer width, or nil when it fits.
    static func typeProblem(with value: AttributeValue, for attribute: AttributeDescription) -> String? {
        if !value.fits(attribute.type) { return "holds a value that is not a \(attribute.type.xcodeName)" }
        if case .integer(let integer) = value {
            let bounds: ClosedRange<Int64>? =
                switch attribute.type {
                case .integer16: Int64(Int16.min)...Int64(Int16.max)
                case .integer32: Int64(Int32.min)...Int64(Int32.max)
                default: nil
                }
            if let bounds, !bounds.contains(integer) { return "does not fit \(attribute.type.xcodeName)" }
        }
        return nil
    }

    /// Which of the model's rules (minimum, maximum, pattern) a value breaks, or nil.
    private static func ruleProblem(with value: AttributeValue, for attribute: AttributeDescription) -> String? {
        guard attribute.minimum != nil || attribute.maximum != nil || attribute.regularExpression != nil else {
            return nil
        }
        // Counting a string's characters walks all of it: only for attributes with bounds.
        let measure: Double?
        switch value {
        case .integer(let integer): measure = Double(integer)
        case .double(let double): measure = double
        case .decimal(let decimal): measure = NSDecimalNumber(decimal: decimal).doubleValue
        case .string(let string): measure = Double(string.count)
        case .data(let data): measure = Double(data.count)
        case .date(let date): measure = date.timeIntervalSinceReferenceDate
        default: measure = nil
        }
        let what = if case .string = value { "length" } else if case .data = value { "size" } else { "value" }
        if let measure, let minimum = attribute.minimum.flatMap(Self.number), measure < minimum {
            return "has a \(what) below its minimum"
        }
        if let measure, let maximum = attribute.maximum.flatMap(Self.number), measure > maximum {
            return "has a \(what) above its maximum"
        }
        if case .string(let string) = value, let pattern = attribute.regularExpression {
            guard let regex = try? NSRegularExpression(pattern: pattern) else {
                return "has an invalid pattern in the model"
            }
            let whole = NSRange(string.startIndex..., in: string)
            if regex.firstMatch(in: string, options: [.anchored], range: whole)?.range != whole {
                return "does not match its pattern"
            }
        }
        return nil
    }

    private static func number(_ bound: AttributeValue) -> Double? {
        switch bound {
        case .integer(let integer): Double(integer)
        case .double(let double): double
        case .decimal(let decimal): NSDecimalNumber(decimal: decimal).doubleValue
        case .date(let date): date.timeIntervalSinceReferenceDate
        default: nil
        }
    }

    private func relationshipFailures(of object: ManagedObject) -> [TernError] {
        var failures: [TernError] = []
        for relationship in object.schema.relationships.values.sorted(by: { $0.name < $1.name }) {
            let count =
                relationship.isToMany
                ? (object.toMany[relationship.name] ?? []).count : (object.toOne[relationship.name] == nil ? 0 : 1)
            if count == 0 {
                if relationship.isRequired { failures.append(failure(object, relationship.name, "is required")) }
                continue
            }
            let ids =
                relationship.isToMany
                ? object.toMany[relationship.name] ?? [] : object.toOne[relationship.name].map { [$0] } ?? []
            if ids.contains(where: graph.inaccessibleIDs.contains) {
                failures.append(
                    failure(object, relationship.name, "refers to an object deleted by another context or process"))
            }
            guard relationship.isToMany else { continue }
            if relationship.minCount > 0, count < relationship.minCount {
                failures.append(
                    failure(object, relationship.name, "holds \(count) object(s), fewer than \(relationship.minCount)"))
            }
            if relationship.maxCount > 0, count > relationship.maxCount {
                failures.append(
                    failure(object, relationship.name, "holds \(count) object(s), more than \(relationship.maxCount)"))
            }
        }
        return failures
    }

    private func uniquenessFailures(among objects: [ManagedObject]) -> [TernError] {
        var failures: [TernError] = []
        var seen: [String: [[AnyHashable]: ObjectID]] = [:]
        for object in objects {
            for (entity, properties) in object.schema.uniquenessConstraints {
                let values = properties.map {
                    object.values[$0].map(AnyHashable.init) ?? object.toOne[$0].map(AnyHashable.init)
                }
                let key = values.compactMap { $0 }
                guard key.count == properties.count else { continue }
                let scope = entity + "|" + properties.joined(separator: ",")
                if seen[scope]?[key] != nil {
                    failures.append(
                        failure(object, properties.joined(separator: ","), "repeats the values of another \(entity)"))
                } else {
                    seen[scope, default: [:]][key] = object.objectID
                }
            }
        }
        return failures
    }
}
