import Foundation
import Testing

@testable import TernTool

@Suite struct JSONValueTests {
    @Test func keysAreSortedAndValuesKeepTheirTypes() {
        let value: JSONValue = [
            "b": .integer(2), "a": .array([.bool(true), .null, .double(1.5)]), "c": .string("x/é\"y"),
            "d": .double(.nan),
        ]
        #expect(value.encoded(pretty: false) == #"{"a":[true,null,1.5],"b":2,"c":"x/é\"y","d":null}"#)
        #expect(JSONValue.string(nil) == .null)
    }

    @Test func prettyOutputIsStillSorted() {
        let text = JSONValue(dictionaryLiteral: ("z", .integer(1)), ("y", .object([:]))).encoded()
        let y = text.range(of: "\"y\"")
        let z = text.range(of: "\"z\"")
        #expect(y != nil && z != nil)
        if let y, let z { #expect(y.lowerBound < z.lowerBound) }
    }
}
