import Foundation

/// Escaping for the XML store: what may go into XML text and attributes as is, and how the
/// rest is written.
enum XMLText {
    /// Whether XML 1.0 can carry the text at all: it has no way, not even a character
    /// reference, to hold NUL, most other C0 controls, or U+FFFE and U+FFFF.
    static func isRepresentable(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { scalar in
            switch scalar.value {
            case 0x9, 0xA, 0xD: true
            case 0x0..<0x20, 0xFFFE, 0xFFFF: false
            default: true
            }
        }
    }

    /// Escapes text for element content. Carriage returns become `&#13;` so that the parser's
    /// line-end normalisation cannot turn them into line feeds.
    static func escapedContent(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\r": result += "&#13;"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Escapes text for a double-quoted attribute value, including the whitespace that
    /// attribute normalisation would otherwise turn into spaces.
    static func escapedAttribute(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "\t": result += "&#9;"
            case "\n": result += "&#10;"
            case "\r": result += "&#13;"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
