/// The first byte of a binary column whose attribute allows external storage, as Core Data
/// writes it: the bytes follow inline, or the name of the file that holds them.
///
/// `<store folder>/.<store name>_SUPPORT/_EXTERNAL_DATA/<UUID>` holds the files; the column then
/// holds the marker, the UUID in ASCII and a NUL.
package enum ExternalValueMarker {
    /// The marker of a value kept in the column.
    package static let inline: UInt8 = 0x01
    /// The marker of a value kept in a file.
    package static let external: UInt8 = 0x02
}
