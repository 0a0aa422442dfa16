import Foundation

/// Foundation's lenient readings of text as numbers and Booleans, which `momc` applies to the
/// value strings of a model (`NSString`'s `integerValue`, `doubleValue` and `boolValue`,
/// `NSDecimalNumber(string:)`).
///
/// Each reading skips leading white space, takes an optional sign and the digits that follow,
/// and ignores the rest of the text; a text without digits reads as 0 (as not a number for
/// decimals). The readings are done here rather than by the platform's Foundation so that they
/// are the same on every platform.
///
/// ```swift
/// FoundationText.integerValue(" 12 apples")   // (12, isExact: false)
/// FoundationText.boolValue("0.0")             // false
/// ```
enum FoundationText {
    /// A number found at the start of a text.
    struct Scan: Equatable {
        /// The number's text: sign, digits, and for real numbers a fraction and an exponent.
        /// Empty when the text does not start with a number.
        var number: String
        /// The text after the number.
        var rest: String

        /// Whether nothing but white space surrounds the number.
        var isWhole: Bool { !number.isEmpty && rest.unicodeScalars.allSatisfy(FoundationText.isWhiteSpace) }
    }

    // MARK: - Readings

    /// `NSString.integerValue` (64-bit): the leading whole number, clamped to `Int64` on overflow.
    ///
    /// - Returns: The value, and whether the text was exactly a whole number: only white space
    ///   around it, or a fraction of zeros (`3.0`), and no overflow.
    /// - Complexity: O(*n*) in the length of the text.
    static func integerValue(_ text: String) -> (value: Int64, isExact: Bool) {
        let scan = self.scan(text, real: false)
        guard !scan.number.isEmpty else { return (0, false) }
        guard let value = Int64(scan.number) else { return (scan.number.hasPrefix("-") ? .min : .max, false) }
        let zeroFraction =
            scan.rest.first == "."
            && scan.rest.dropFirst().drop(while: { $0 == "0" })
                .unicodeScalars.allSatisfy(isWhiteSpace)
        return (value, scan.isWhole || zeroFraction)
    }

    /// `NSString.doubleValue`: the leading decimal number (digits, an optional fraction and
    /// exponent), infinite on overflow.
    ///
    /// - Returns: The value, and whether the text was exactly a finite number.
    /// - Complexity: O(*n*) in the length of the text.
    static func doubleValue(_ text: String) -> (value: Double, isExact: Bool) {
        let scan = self.scan(text, real: true)
        guard !scan.number.isEmpty, let value = Double(normalized(scan.number)) else { return (0, false) }
        return (value, scan.isWhole && value.isFinite)
    }

    /// `NSDecimalNumber(string:)` with the POSIX locale: the leading decimal number.
    ///
    /// - Returns: The value, or nil where Foundation gives not-a-number (no digits, or an
    ///   exponent beyond the decimal range); and whether the text was exactly a decimal number.
    /// - Complexity: O(*n*) in the length of the text.
    static func decimalValue(_ text: String) -> (value: Decimal?, isExact: Bool) {
        let scan = self.scan(text, real: true)
        guard !scan.number.isEmpty, let value = Decimal(string: normalized(scan.number), locale: posixLocale) else {
            return (nil, false)
        }
        return (value, scan.isWhole)
    }

    /// `NSString.boolValue`: true when, after white space, an optional sign and zeros, the text
    /// starts with `Y`, `y`, `T`, `t` or a digit 1 to 9.
    ///
    /// - Complexity: O(*n*) in the length of the text.
    static func boolValue(_ text: String) -> Bool {
        var scalars = Substring(text).unicodeScalars.drop(while: isWhiteSpace)
        if let first = scalars.first, first == "+" || first == "-" { scalars = scalars.dropFirst() }
        scalars = scalars.drop { $0 == "0" }
        guard let first = scalars.first else { return false }
        return "YyTt".unicodeScalars.contains(first) || ("1"..."9").contains(first)
    }

    /// Whether a Boolean's text is one of the spellings that need no lenient reading: `YES`,
    /// `NO`, `TRUE`, `FALSE` (in any case), `1` or `0`, with white space around it.
    static func isExactBool(_ text: String) -> Bool {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines).uppercased()
        return ["YES", "NO", "TRUE", "FALSE", "1", "0"].contains(trimmed)
    }

    // MARK: - Scanning

    /// Finds the number at the start of a text: white space, an optional sign, digits, and for
    /// real numbers an optional fraction and an exponent (`e` or `E`, a sign, digits).
    ///
    /// - Complexity: O(*n*) in the length of the text.
    static func scan(_ text: String, real: Bool) -> Scan {
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count, isWhiteSpace(scalars[index]) { index += 1 }
        let start = index
        if index < scalars.count, scalars[index] == "+" || scalars[index] == "-" { index += 1 }
        var digits = skipDigits(scalars, from: &index)
        if real, index < scalars.count, scalars[index] == "." {
            var end = index + 1
            let fraction = skipDigits(scalars, from: &end)
            if digits + fraction > 0 {
                index = end
                digits += fraction
            }
        }
        guard digits > 0 else { return Scan(number: "", rest: text) }
        if real, index < scalars.count, scalars[index] == "e" || scalars[index] == "E" {
            var end = index + 1
            if end < scalars.count, scalars[end] == "+" || scalars[end] == "-" { end += 1 }
            if skipDigits(scalars, from: &end) > 0 { index = end }
        }
        return Scan(number: string(scalars[start..<index]), rest: string(scalars[index...]))
    }

    // MARK: - Non public

    private static let posixLocale = Locale(identifier: "en_US_POSIX")

    /// Whether a character is white space, as Foundation skips it.
    static func isWhiteSpace(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isWhitespace
    }

    private static func skipDigits(_ scalars: [Unicode.Scalar], from index: inout Int) -> Int {
        let start = index
        while index < scalars.count, ("0"..."9").contains(scalars[index]) { index += 1 }
        return index - start
    }

    private static func string(_ scalars: ArraySlice<Unicode.Scalar>) -> String {
        var result = ""
        result.unicodeScalars.append(contentsOf: scalars)
        return result
    }

    /// A scanned real number in a form Swift's parsers take: a digit before and after the point.
    private static func normalized(_ number: String) -> String {
        var text = number
        if let point = text.firstIndex(of: ".") {
            let after = text.index(after: point)
            if after == text.endIndex || !(text[after].isASCII && text[after].isNumber) {
                text.insert("0", at: after)
            }
            if point == text.startIndex
                || !(text[text.index(before: point)].isASCII && text[text.index(before: point)].isNumber)
            {
                text.insert("0", at: point)
            }
        }
        return text
    }
}
