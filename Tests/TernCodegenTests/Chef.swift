public import TernCore

/// The hand-written class of the `Chef` entity, whose codegen is `category`: the plugin adds its
/// properties in an extension.
public final class Chef: ManagedObject {
    /// Something of the developer's own, beside the generated properties.
    var greeting: String { "Chef \(name ?? "?")" }
}
