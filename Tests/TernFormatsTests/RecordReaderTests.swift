import Foundation
import TernFormats
import TernTestSupport
import Testing

/// The TSV, CSV and JSON record readers: escapes, quoting, batches and located errors.
@Suite struct RecordReaderTests {
    func write(_ bytes: [UInt8], _ name: String, in tmp: TemporaryDirectory) throws -> URL {
        let url = tmp.path(name)
        try Data(bytes).write(to: url)
        return url
    }

    func readAll(_ url: URL, _ dialect: DelimitedRecordReader.Dialect, batch: Int = 500) throws -> [ImportRecord] {
        let reader = try DelimitedRecordReader(contentsOf: url, dialect: dialect)
        var all: [ImportRecord] = []
        while case let records = try reader.nextBatch(maxCount: batch), !records.isEmpty { all += records }
        return all
    }

    func error(_ body: () throws -> Void) -> RecordError? {
        do {
            try body()
            return nil
        } catch let error as RecordError { return error } catch { return nil }
    }

    @Test func tsvEscapesEmptyFieldsAndCRLF() throws {
        let tmp = try TemporaryDirectory()
        let url = try write(Array("a\tb\r\nx\\ty\\\\z\t\r\n\nline\\nbreak\tq\\r\n".utf8), "f.tsv", in: tmp)
        let records = try readAll(url, .tsv)
        #expect(records.count == 2)
        #expect(records[0].fields == ["a": .text("x\ty\\z"), "b": .null])
        #expect(records[1].fields == ["a": .text("line\nbreak"), "b": .text("q\r")])
        #expect(records[1].line == 4)
        #expect(records[1].columns == ["a": 1, "b": 2])
    }

    @Test func csvQuotesDoubledQuotesAndEmbeddedNewlines() throws {
        let tmp = try TemporaryDirectory()
        let url = try write(
            Array("name,note\r\n\"Smith, J\",\"said \"\"hi\"\"\r\nthen left\"\r\nplain,\r\n\"\",x\n".utf8), "f.csv",
            in: tmp)
        let records = try readAll(url, .csv, batch: 1)
        #expect(records.count == 3)
        #expect(records[0].fields == ["name": .text("Smith, J"), "note": .text("said \"hi\"\r\nthen left")])
        #expect(records[1].fields == ["name": .text("plain"), "note": .null])
        #expect(records[1].line == 4)
        #expect(records[2].fields["name"] == .text(""))
    }

    @Test func largeFilesStreamAcrossChunks() throws {
        let tmp = try TemporaryDirectory()
        var text = "n,s\n"
        for index in 0..<20_000 { text += "\(index),\"v\(index)\nmore\"\n" }
        let url = try write(Array(text.utf8), "big.csv", in: tmp)
        let reader = try DelimitedRecordReader(contentsOf: url, dialect: .csv)
        let first = try reader.nextBatch(maxCount: 700)
        #expect(first.count == 700)
        #expect(reader.bytesRead < Int64(text.utf8.count))
        var rest = first
        while case let batch = try reader.nextBatch(maxCount: 700), !batch.isEmpty { rest += batch }
        #expect(rest.count == 20_000)
        #expect(rest[19_999].fields["s"] == .text("v19999\nmore"))
        #expect(rest[19_999].line == 2 + 2 * 19_999)
    }

    @Test func errorsNameTheLineAndColumnNotTheValue() throws {
        let tmp = try TemporaryDirectory()
        let wrong = try write(Array("a,b\n1,2\n3,4,secret\n".utf8), "w.csv", in: tmp)
        let count = try #require(error { _ = try readAll(wrong, .csv) })
        #expect(count.line == 3 && count.code == .malformedFile)
        #expect(!count.description.contains("secret") && count.description.contains("w.csv:3"))
        let open = try write(Array("a,b\n1,\"never\nclosed\n".utf8), "q.csv", in: tmp)
        let quote = try #require(error { _ = try readAll(open, .csv) })
        #expect(quote.line == 2 && quote.column == 2)
        let after = try write(Array("a\n\"x\"y\n".utf8), "a.csv", in: tmp)
        #expect(error { _ = try readAll(after, .csv) }?.line == 2)
        let utf8 = try write(Array("a\tb\nok\t".utf8) + [0xFF, 0xFE] + Array("\n".utf8), "u.tsv", in: tmp)
        let bad = try #require(error { _ = try readAll(utf8, .tsv) })
        #expect(bad.code == .invalidUTF8 && bad.line == 2 && bad.column == 2)
        let header = try write(Array("a\ta\n".utf8), "h.tsv", in: tmp)
        #expect(error { _ = try readAll(header, .tsv) }?.column == 2)
        let missing = tmp.path("missing.tsv")
        #expect(error { _ = try readAll(missing, .tsv) }?.code == .unreadableFile)
    }

    @Test func jsonArraysEntityObjectsAndNesting() throws {
        let reader = try JSONRecordReader(
            text: """
                {"Recipe": [
                  {"uid": "a", "servings": 4, "price": 1.50, "ok": true, "steps": [{"text": "\\u00e9\\n"}]},
                  {"uid": null}
                ],
                 "Tag": []}
                """)
        #expect(reader.count == 2)
        let records = reader.nextBatch(maxCount: 10)
        #expect(records.map(\.entityName) == ["Recipe", "Recipe"])
        #expect(records[0].line == 2 && records[1].line == 3)
        #expect(records[0].fields["servings"] == .number("4"))
        #expect(records[0].fields["price"] == .number("1.50"))
        #expect(records[0].fields["ok"] == .bool(true))
        guard case .list(let steps)? = records[0].fields["steps"], case .record(let step)? = steps.first else {
            Issue.record("steps should be a list of records")
            return
        }
        #expect(step.fields["text"] == .text("é\n"))
        let plain = try JSONRecordReader(text: "[{\"a\": 1}, {\"a\": 2}]")
        #expect(plain.nextBatch(maxCount: 1).first?.entityName == nil)
        #expect(plain.nextBatch(maxCount: 5).count == 1)
        #expect(plain.nextBatch().isEmpty)
    }

    @Test func jsonErrorsAreLocated() {
        let cases: [(String, Int)] = [
            ("[{\"a\": 1},\n {\"a\": }]", 2), ("{\"R\": [{\"a\": \"x}]}", 1), ("[1]", 1),
            ("[{\"a\": 1, \"a\": 2}]", 1), ("[{}] x", 1), ("\"text\"", 1), ("[{\"a\": tru}]", 1),
        ]
        for (text, line) in cases {
            let failure = error { _ = try JSONRecordReader(text: text, path: "r.json") }
            #expect(failure?.line == line, "\(text)")
            #expect(failure?.path == "r.json")
        }
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(error { _ = try JSONRecordReader(text: deep) }?.code == .malformedFile)
    }
}
