import Foundation
import TernTestSupport

/// The facts `Tests/Fixtures/EXPECTED.md` lists for each real store, as Core Data wrote them.
struct ExpectedStore: Sendable, CustomStringConvertible {
    var path: String
    var uuid: String
    var frameworkVersion: Int
    var identifiers: [String]
    var checksum: String?
    var digest: String?
    var hashes: [String: String]
    var primaryKeys: [(entity: Int, name: String, superEntity: Int, max: Int)]
    var rowCounts: [String: Int]
    var journalMode: String

    var description: String { (path as NSString).lastPathComponent }
    var url: URL { Fixtures.url(path) }

    static let all: [ExpectedStore] = [
        ExpectedStore(
            path: "CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite",
            uuid: "753753D3-A961-4901-AB05-8CC48B1D3853", frameworkVersion: 1044, identifiers: ["1"],
            checksum: nil,
            digest: "fACvwxty0QWritKFX3/LTtXZvI64UnFcRtP6qcjW1Yl0owr+rH+SpCvzy/uDYRpknMXbgacd3srn9wmE2KkL8Q==",
            hashes: [
                "Car": "nlVVKQchWCING6zS+Ao9rUkZ90oyqovp7iKmp7QSbI8=",
                "ExpensiveSportCar": "PcfjKxvkW1pMeVrJrz4dEKpyItPGmugFu+tECL3rpIA=",
                "Person": "FkJoVRtFEIrnY6orph/zLTLTIyOFCYfD4hYHyNpEtys=",
                "SportCar": "UU7BkHpWgpn5+2hREGUWE28HVfRfpTqCOg5NRAE9UxM=",
            ],
            primaryKeys: [
                (1, "Car", 0, 125), (2, "SportCar", 1, 0), (3, "ExpensiveSportCar", 2, 0), (4, "Person", 0, 20),
            ],
            rowCounts: ["ZCAR": 125, "ZPERSON": 20, "Z_METADATA": 1, "Z_MODELCACHE": 1, "Z_PRIMARYKEY": 4],
            journalMode: "wal"),
        ExpectedStore(
            path: "CoreDataPlus/SampleModel/Fixtures/SampleModel_V2.sqlite",
            uuid: "753753D3-A961-4901-AB05-8CC48B1D3853", frameworkVersion: 1044, identifiers: ["2"],
            checksum: nil,
            digest: "gA/GyOCh8sMDKPJBWGZpv2usq+rU1r4MjgwPc9tbafDh4RTvoBOjSnmanNvWopksmy/criJNqsnPcAZkTmEa7Q==",
            hashes: [
                "Car": "flA++/S2PNk/9ynpZ14hxjxlJi2FqYifWaJECvZIG5M=",
                "LuxuryCar": "qHPFWQAQ5Oo/e9+EZ4bfv1ywlVJrhqoN4sVpxLsSGIY=",
                "Person": "BnrmLhvRAUy2VZ2ZCAOuWPNU3Rt7p7dyKjYcDDnyE04=",
                "SportCar": "cipVtbvNUddIdqTdj497veV93GHLZaV37FsPvpeNe4w=",
            ],
            primaryKeys: [
                (1, "Car", 0, 125), (2, "SportCar", 1, 0), (3, "ExpensiveSportCar", 2, 0), (4, "Person", 0, 20),
            ],
            rowCounts: ["ZCAR": 125, "ZPERSON": 20, "Z_METADATA": 1, "Z_MODELCACHE": 1, "Z_PRIMARYKEY": 4],
            journalMode: "delete"),
        ExpectedStore(
            path: "CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V1.sqlite",
            uuid: "C9CB0B35-ED6A-4042-BE5C-1B911AC00B2A", frameworkVersion: 1344, identifiers: [],
            checksum: "OcE8L8XxVX/G+zRQ2cbYPP91smjL3tynDfRzfdDAPnU=",
            digest: "4DP4SkxuqaFe8F0JOiaajNQd9cjhjuifuGFD+7WFwVrRgDlG0FZC2nQvTPW2p0clmWgFv1jqkZ5RNGPr6GhOJA==",
            hashes: [
                "Author": "B7iKt2+989cByFaI6bCCDwza5rwsMdJNH9wRUlHRPRI=",
                "Book": "AeTuF/GykD2wVgdBm0pxPXLfgMkLRRC4OmC5E1Mj9ec=",
                "Feedback": "y0Z5PWbbAWi67XmY2z3g1Paf3tq7Fg1fMgchdWhQMcw=",
                "GraphicNovel": "poY7Pr8Gve0MDZPr1BbnTvL035a2nLBwIGotOVkvMxY=",
                "Page": "nulEX5Bg3Argc3ypMN0xIkavyXNihpy1t4deW8mJkXE=",
                "Writer": "1U76tdOcs/Wd+AGNteTLKRLO1Jyg/euwKaMmzXCEeyU=",
            ],
            primaryKeys: [
                (1, "Book", 0, 52), (2, "GraphicNovel", 1, 0), (3, "Feedback", 0, 444), (4, "Page", 0, 4970),
                (5, "Writer", 0, 2), (6, "Author", 5, 0), (16001, "CHANGE", 0, 5468), (16002, "TRANSACTION", 0, 1),
                (16003, "TRANSACTIONSTRING", 0, 2),
            ],
            rowCounts: [
                "ACHANGE": 5468, "ATRANSACTION": 1, "ATRANSACTIONSTRING": 2, "ZBOOK": 52, "ZFEEDBACK": 444,
                "ZPAGE": 4970, "ZWRITER": 2, "Z_METADATA": 1, "Z_MODELCACHE": 1, "Z_PRIMARYKEY": 9,
            ],
            journalMode: "wal"),
        ExpectedStore(
            path: "CoreDataPlus/SampleModel3/Fixtures/SampleModel3_V1.sqlite",
            uuid: "5443A63D-EF0E-44C2-B216-AE8B5ED2FD09", frameworkVersion: 1344, identifiers: ["1"],
            checksum: "u970QgYhRHEJGIt0zQr1UhuZL2ZJ1KxBS+B7rkAx0ik=",
            digest: "0KLB/FnL8roMcgeszeCxnPnvYqnn4VzB2DpFP6csqrDKzLB6fyG5rrVfjY5DtnQxx4355oWuKFublPf2Jo1UWg==",
            hashes: ["User": "azH06XtpHRbEyCC65V+JQI1HATvUIVHs/eHqx/5L55g="],
            primaryKeys: [(1, "User", 0, 12)],
            rowCounts: ["ZUSER": 12, "Z_METADATA": 1, "Z_MODELCACHE": 1, "Z_PRIMARYKEY": 1],
            journalMode: "wal"),
        ExpectedStore(
            path: "CoreDataStack/TestModel.sqlite",
            uuid: "E7350B5D-5058-46F7-90B9-DCA517BBAF92", frameworkVersion: 637, identifiers: [""],
            checksum: nil, digest: nil,
            hashes: [
                "Author": "y8H1wnTr9BRHTE41D3OxSx3TVsIngq50iIENWXGIxG0=",
                "Book": "KSySPkjCy+6loRO7doX7xjq4AMC7wkKtF6Dy4qHgj1w=",
            ],
            primaryKeys: [(1, "Author", 0, 0), (2, "Book", 0, 0)],
            rowCounts: [
                "ZAUTHOR": 0, "ZBOOK": 0, "Z_1BOOKS": 0, "Z_METADATA": 1, "Z_MODELCACHE": 1, "Z_PRIMARYKEY": 2,
            ],
            journalMode: "wal"),
    ]
}

extension TemporaryDirectory {
    /// Copies a fixture store (and any `-wal`/`-shm` files beside it) into the folder.
    func copyStore(_ expected: ExpectedStore) throws -> URL {
        let copy = try self.copy(expected.url)
        for suffix in ["-wal", "-shm"] {
            let sidecar = URL(fileURLWithPath: expected.url.path + suffix)
            if FileManager.default.fileExists(atPath: sidecar.path) { try self.copy(sidecar) }
        }
        return copy
    }

    /// The names of the files in the folder.
    var fileNames: Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? [])
    }
}
