public import Foundation

/// A ``ManagedObject`` subclass that stands for one entity and knows which model property each of
/// its key paths stands for, so that it can be inserted and fetched with typed predicates and
/// sort descriptors.
///
/// The classes that `TernModelCodegen` (the build plugin) and `tern generate` write from an Xcode
/// model conform: the topmost generated class of each hierarchy declares the conformance, and its
/// subclasses inherit it, each answering with its own entity. Hand-written classes may conform too.
///
/// ```swift
/// try await context.perform { context in
///     let soup = context.insert(Recipe.self)      // registers the model's classes on first use
///     soup.title = "Tomato Soup"
///     try await context.save()
///     let request = Recipe.fetchRequest(
///         predicate: #Predicate<Recipe> { $0.title?.starts(with: "T") == true },
///         sortBy: [SortDescriptor(\.title)])
///     let recipes: [Recipe] = try await context.fetch(request)
/// }
/// ```
///
/// ## Topics
///
/// ### Naming
/// - ``entityName``
/// - ``propertyName(for:)``
/// - ``registerModelClasses(in:)``
///
/// ### Fetching
/// - ``fetchRequest(predicate:sortBy:)``
public protocol TypedManagedObject: ManagedObject {
    /// The name of the entity the class stands for (for a generated subclass, its own entity).
    static var entityName: String { get }

    /// The model property a key path of the class stands for.
    ///
    /// - Parameter keyPath: A key path whose root is this class (or one of its subclasses).
    /// - Returns: The name of the non-transient attribute or relationship behind the key path, or
    ///   nil when it stands for none (a computed property, a transient attribute).
    static func propertyName(for keyPath: AnyKeyPath) -> String?

    /// Registers this class, and the other classes generated from the same model, with a context,
    /// for the entities the context's model has.
    ///
    /// Typed inserts and fetches call it when the context has no class for the entity yet.
    ///
    /// - Parameter context: The context.
    static func registerModelClasses(in context: isolated ObjectContext)
}

extension TypedManagedObject {
    /// Registers this class alone, for ``entityName``.
    ///
    /// - Parameter context: The context.
    public static func registerModelClasses(in context: isolated ObjectContext) {
        context.register(Self.self, forEntity: entityName)
    }

    /// A typed fetch request for objects of this class's entity (and its subentities).
    ///
    /// ```swift
    /// let request = Recipe.fetchRequest(predicate: #Predicate { $0.servings > 2 }, sortBy: [SortDescriptor(\.servings)])
    /// ```
    ///
    /// - Parameters:
    ///   - predicate: The condition objects must meet; nil for all.
    ///   - sortBy: The order of the results.
    /// - Returns: The request, for `ObjectContext.fetch(_:)`.
    public static func fetchRequest(
        predicate: Predicate<Self>? = nil, sortBy: [SortDescriptor<Self>] = []
    ) -> FetchDescriptor<Self> {
        FetchDescriptor(predicate: predicate, sortBy: sortBy)
    }
}
