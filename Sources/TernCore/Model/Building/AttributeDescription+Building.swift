public import Foundation

/// The builder's spelling of attributes: a short initializer and chainable modifiers.
///
/// ```swift
/// Attribute("servings", .integer16).default(.integer(2)).range(1...100)
/// Attribute("email", .string).required().matching("[^@]+@[^@]+")
/// Attribute("photo", .binary).externalStorage()
/// ```
extension AttributeDescription {
    /// Creates an optional, stored attribute.
    ///
    /// - Parameters:
    ///   - name: The attribute's name.
    ///   - type: Its type.
    public init(_ name: String, _ type: AttributeType) {
        self.init(name: name, type: type)
    }

    // MARK: - Values

    /// A copy with a default value for new objects.
    ///
    /// - Parameter value: The default; it must fit the attribute's type.
    public func `default`(_ value: AttributeValue) -> Self { updating { $0.defaultValue = value } }

    /// A copy whose values (numbers) or lengths (strings and binary data) lie in a range.
    ///
    /// The bounds are stored in the attribute's type: doubles for Double and Float, decimals
    /// for Decimal, integers otherwise.
    ///
    /// - Parameter range: The smallest and largest allowed value or length.
    public func range(_ range: ClosedRange<Int>) -> Self {
        updating {
            $0.minimum = $0.bound(Double(range.lowerBound), exactly: Int64(range.lowerBound))
            $0.maximum = $0.bound(Double(range.upperBound), exactly: Int64(range.upperBound))
        }
    }

    /// A copy whose floating-point or decimal values lie in a range.
    ///
    /// - Parameter range: The smallest and largest allowed value.
    public func range(_ range: ClosedRange<Double>) -> Self {
        updating {
            $0.minimum = $0.bound(range.lowerBound, exactly: nil)
            $0.maximum = $0.bound(range.upperBound, exactly: nil)
        }
    }

    /// A copy whose dates lie in a range.
    ///
    /// - Parameter range: The earliest and latest allowed date.
    public func range(_ range: ClosedRange<Date>) -> Self {
        updating {
            $0.minimum = .date(range.lowerBound)
            $0.maximum = .date(range.upperBound)
        }
    }

    /// A copy whose string values must match a regular expression in full.
    ///
    /// - Parameter pattern: An `NSRegularExpression` pattern.
    public func matching(_ pattern: String) -> Self { updating { $0.regularExpression = pattern } }

    // MARK: - Storage

    /// A copy whose large binary values may be stored in files beside the store.
    public func externalStorage() -> Self { updating { $0.allowsExternalBinaryDataStorage = true } }

    /// A copy whose value persistent history keeps after its object is deleted.
    public func preservedAfterDeletion() -> Self { updating { $0.preservesValueInHistoryOnDeletion = true } }

    /// A copy with a legacy single-property index.
    public func indexed() -> Self { updating { $0.isIndexed = true } }

    /// A copy derived from an expression, such as `"count:(items)"` or `"now()"`.
    ///
    /// - Parameter expression: The derivation expression in Core Data's text format.
    public func derived(from expression: String) -> Self { updating { $0.derivationExpression = expression } }

    /// A copy whose values are converted to bytes by a named value transformer.
    ///
    /// - Parameters:
    ///   - transformerName: The value transformer's name.
    ///   - valueClassName: The class of the values, if any.
    public func transformed(by transformerName: String, valueClassName: String? = nil) -> Self {
        updating {
            $0.valueTransformerName = transformerName
            $0.attributeValueClassName = valueClassName
        }
    }

    // MARK: - Non public

    /// A range bound in this attribute's type: lengths and integers stay integers.
    private func bound(_ value: Double, exactly integer: Int64?) -> AttributeValue {
        switch type {
        case .double, .float: .double(value)
        case .decimal: .decimal(integer.map { Decimal($0) } ?? Decimal(value))
        default: integer.map(AttributeValue.integer) ?? .double(value)
        }
    }
}
