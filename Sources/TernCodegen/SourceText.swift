/// Source text built line by line, with indentation.
struct SourceText {
    private(set) var text = ""
    private var depth = 0

    /// Appends a line at the current indentation (an empty line for no text).
    mutating func line(_ content: String = "") {
        text += content.isEmpty ? "\n" : String(repeating: "    ", count: depth) + content + "\n"
    }

    /// Appends `/// text` lines (`///` alone for an empty one).
    mutating func doc(_ lines: String...) {
        for content in lines { line(content.isEmpty ? "///" : "/// " + content) }
    }

    /// Appends what `body` writes one level deeper, with no braces.
    mutating func nested(_ body: (inout SourceText) -> Void) {
        depth += 1
        body(&self)
        depth -= 1
    }

    /// Appends `opening {`, the body one level deeper, and `}` (or another closing).
    mutating func block(_ opening: String, closing: String = "}", _ body: (inout SourceText) -> Void) {
        line(opening + " {")
        depth += 1
        body(&self)
        depth -= 1
        line(closing)
    }
}
