public import TernCore

/// The model of the tests of a relationship whose destination entity changes: `Album.cover`
/// holds any `Artwork` in v1 and only `Image`s (a subentity of `Artwork`) in v2, so links to plain
/// artwork are dropped; v2 may also add a required `Album.name`, with or without a default.
public enum AlbumCovers {
    /// The two versions.
    ///
    /// - Parameters:
    ///   - requiredName: Whether v2 adds a required `Album.name`.
    ///   - nameDefault: Its default value, if any.
    /// - Throws: `TernError` if the model does not build (a bug).
    public static func model(requiredName: Bool = false, nameDefault: AttributeValue? = nil) throws -> VersionedModel {
        try VersionedModel("Albums") {
            ModelVersion("v1") {
                Entity("Album") { Relationship("cover", to: "Artwork") }
                Entity("Artwork") { Attribute("title", .string) }
                Entity("Image", parent: "Artwork") { Attribute("pixels", .integer64) }
            }
            ModelVersion("v2") {
                Entity("Album") {
                    Relationship("cover", to: "Image")
                    if requiredName {
                        nameDefault.map { Attribute("name", .string).required().default($0) }
                            ?? Attribute("name", .string).required()
                    }
                }
                Entity("Artwork") { Attribute("title", .string) }
                Entity("Image", parent: "Artwork") { Attribute("pixels", .integer64) }
            }
        }
    }
}
