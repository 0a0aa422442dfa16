public import Foundation
public import TernCore

/// Core Data's model cache: the managed object model that last wrote a store, kept inside the
/// store in `Z_MODELCACHE.Z_CONTENT`.
///
/// The cache is an `NSKeyedArchiver` binary property list of the `NSManagedObjectModel`,
/// compressed as raw DEFLATE. Decoding it recovers a store's schema without the app's model
/// files; encoding writes the same layout, so both Tern and Core Data can read it back.
///
/// ```swift
/// let blob: Data = …                          // SELECT Z_CONTENT FROM Z_MODELCACHE
/// let model = try ModelCache.decode(blob)
/// model.entities.map(\.name)                  // ["Author", "Book", …]
/// let rewritten = try ModelCache.encode(model)
/// ```
///
/// ## Topics
/// - ``decode(_:maxInflatedBytes:)``
/// - ``encode(_:)``
/// - ``decodeArchive(_:)``
/// - ``encodeArchive(_:)``
public enum ModelCache {
    /// The most bytes a cache may inflate to before decoding gives up: 64 MiB.
    public static let defaultMaxInflatedBytes = Deflate.defaultMaxOutputBytes

    /// Decodes a model cache blob into a model.
    ///
    /// Own properties are told from inherited ones (Core Data archives a subentity with all of
    /// its parent's properties); derived attributes get their expression's text; fetched
    /// properties and fetch request templates get their predicate's text. Values Tern cannot
    /// represent, such as a transformable attribute's default object, are left out.
    ///
    /// - Parameters:
    ///   - compressed: The `Z_CONTENT` bytes: raw DEFLATE of a keyed archive.
    ///   - maxInflatedBytes: The most bytes the blob may inflate to (a guard against
    ///     decompression bombs).
    /// - Returns: The model, with entities and properties sorted by name.
    /// - Throws: ``/TernCore/TernError`` with code `corruptArchive` when the bytes are truncated, corrupt or
    ///   not a model archive (bad UIDs, cycles, wrong classes), and `archiveTooLarge` when they
    ///   inflate past `maxInflatedBytes`.
    /// - Complexity: O(*n*) in the size of the inflated archive.
    public static func decode(_ compressed: Data, maxInflatedBytes: Int = defaultMaxInflatedBytes) throws
        -> ManagedObjectModel
    {
        let archive = try Deflate.inflateRaw(compressed, maxOutputBytes: maxInflatedBytes)
        return try decodeArchive(archive)
    }

    /// Encodes a model as a model cache blob: the keyed archive of an `NSManagedObjectModel`,
    /// compressed as raw DEFLATE.
    ///
    /// The archive uses the classes and keys of Core Data's own caches (`NSEntityDescription`,
    /// `NSAttributeDescription`, `_P` flags, `NSKnownKeysDictionary1`…), so ``decode(_:maxInflatedBytes:)``
    /// reads it back to an equal model and Core Data can read it too. What Core Data does not
    /// archive (code generation settings, `usesScalarValueType`, fetch request settings, the exact
    /// text of expressions and predicates) is kept under extra keys prefixed `_Tern`, which Core
    /// Data ignores. See `docs/ModelCache.md`.
    ///
    /// - Parameter model: The model to encode.
    /// - Returns: Bytes for `Z_MODELCACHE.Z_CONTENT`.
    /// - Throws: ``/TernCore/TernError`` with code `invalidModel` when an entity's parent is missing or the
    ///   inheritance has a cycle, `ioFailure` when compression fails.
    /// - Complexity: O(*n*) in the size of the model.
    public static func encode(_ model: ManagedObjectModel) throws -> Data {
        try Deflate.deflateRaw(encodeArchive(model))
    }

    /// Encodes a model as the uncompressed keyed archive of a model cache.
    ///
    /// - Parameter model: The model to encode.
    /// - Returns: `bplist00` bytes in `NSKeyedArchiver`'s layout.
    /// - Throws: ``/TernCore/TernError`` with code `invalidModel` for a broken inheritance chain.
    /// - Complexity: O(*n*) in the size of the model.
    public static func encodeArchive(_ model: ManagedObjectModel) throws -> Data {
        var encoder = ModelCacheEncoder(model: model)
        return try encoder.archive()
    }

    /// Decodes an inflated model cache: the keyed archive of an `NSManagedObjectModel`.
    ///
    /// - Parameter archive: `bplist00` bytes written by `NSKeyedArchiver`.
    /// - Returns: The model.
    /// - Throws: ``/TernCore/TernError`` with code `corruptArchive` when it is not a model archive.
    /// - Complexity: O(*n*) in the size of the archive.
    public static func decodeArchive(_ archive: Data) throws -> ManagedObjectModel {
        let root = try KeyedArchive(data: archive).rootObject()
        return try ModelCacheDecoder().model(from: root)
    }
}
