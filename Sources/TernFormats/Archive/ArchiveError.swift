public import TernCore

extension TernError.Code {
    /// Bytes that should hold a compressed stream, a binary property list or a keyed archive
    /// are truncated, corrupt, hostile or of an unexpected shape.
    public static let corruptArchive = TernError.Code("corruptArchive")
    /// Decompressed or decoded data would exceed the limit set to protect the process
    /// (a decompression bomb or an absurd size).
    public static let archiveTooLarge = TernError.Code("archiveTooLarge")
}

extension TernError {
    /// An error for malformed archive bytes.
    static func corrupt(_ message: String) -> TernError {
        TernError(.corruptArchive, message)
    }
}
