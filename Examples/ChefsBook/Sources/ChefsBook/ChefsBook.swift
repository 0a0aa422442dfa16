public import TernCore

/// The Chef's Book: a recipe book whose data model went through four versions, the example
/// that `tern demo` walks through and the integration tests start from.
///
/// - Version 1 keeps everything in `Recipe`: name, servings, preparation and cooking time as
///   text ("45 mins"), ingredients and method as text blocks.
/// - Version 2 splits `Ingredient` out into its own entity and turns the times into integer
///   minutes: a custom step (``ChefsBook/SplitIngredientsPolicy``).
/// - Version 3 renames `Recipe.name` to `title` with a renaming identifier and adds a unique `uid`.
/// - Version 4 splits the method into ordered `Step` objects: a custom step
///   (``ChefsBook/SplitStepsPolicy``), which also fills in `uid`.
///
/// The model is `Examples/ChefsBook/ChefsBook.xcdatamodeld`. The `TernModelCodegen` build plugin
/// generates its classes (`Recipe`, `Ingredient`, `Step`, from version 4, whose entities' codegen is
/// `class`) and ``ChefsBookModel``, which embeds every version, so that the `tern` binary needs no
/// files beside it.
///
/// ```swift
/// let model = try ChefsBook.model()
/// model.versions.map(\.name)   // ["ChefsBook 1", …, "ChefsBook 4"]
/// ```
public enum ChefsBook {
    /// The versions' names, oldest first.
    public static let versionNames = ChefsBookModel.versioned.versions.map(\.name)

    /// The versioned model: four versions, the last one current (``ChefsBookModel/versioned``).
    ///
    /// - Throws: Nothing any more; kept so that callers written for a model read at run time
    ///   need no change.
    public static func model() throws -> VersionedModel {
        ChefsBookModel.versioned
    }
}
