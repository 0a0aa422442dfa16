import Foundation

/// The command line of `tern-bench`.
///
/// ```
/// tern-bench [--rows N] [--quick] [--json] [--memory] [--scenario NAME]
/// ```
///
/// With `--scenario` alone the benchmark measures one scenario (both sides) in child
/// processes; the internal `--child SIDE --store PATH` form is what a child runs.
struct BenchOptions {
    /// How many rows each scenario works on.
    var rows = 1_000_000
    /// Whether the figures are written as one JSON document instead of a table.
    var json = false
    /// Whether the streaming scenarios run at 100,000 and at `rows` rows, side by side.
    var memory = false
    /// The scenarios to run; every one when empty.
    var scenarios: [String] = []
    /// In a child process: which side to measure (`tern`, `baseline` or `shell`).
    var childSide: Side?
    /// In a child process: the store file to work on.
    var store: String?
    /// In a child process: the scenario's extra input file, if any.
    var input: String?

    /// The rows of `--quick`.
    static let quickRows = 20_000

    static let usage = """
        usage: tern-bench [--rows N] [--quick] [--json] [--memory] [--scenario NAME]...
          --rows N         rows per scenario (default 1000000)
          --quick          about 20000 rows (what CI runs)
          --json           print the figures as one JSON document
          --memory         peak memory of the streaming scenarios at 100000 rows and at N rows
          --scenario NAME  run only this scenario (repeatable); names: \(Scenario.allCases.map(\.rawValue).joined(separator: ", "))
        """

    /// Reads the options from the arguments (without the program name).
    ///
    /// - Throws: ``BenchFailure`` for an unknown option or a malformed value.
    init(arguments: [String]) throws {
        var remaining = arguments[...]
        func value(after option: String) throws -> String {
            guard let next = remaining.popFirst() else { throw BenchFailure("\(option) needs a value") }
            return next
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "--rows":
                let text = try value(after: argument)
                guard let count = Int(text.replacingOccurrences(of: "_", with: "")), count > 0 else {
                    throw BenchFailure("--rows needs a positive number, not \(text)")
                }
                rows = count
            case "--quick": rows = Self.quickRows
            case "--json": json = true
            case "--memory": memory = true
            case "--scenario":
                let name = try value(after: argument)
                guard Scenario(rawValue: name) != nil else {
                    throw BenchFailure("unknown scenario \(name)\n\(Self.usage)")
                }
                scenarios.append(name)
            case "--child":
                let name = try value(after: argument)
                guard let side = Side(rawValue: name) else { throw BenchFailure("unknown side \(name)") }
                childSide = side
            case "--store": store = try value(after: argument)
            case "--input": input = try value(after: argument)
            case "--help", "-h": throw BenchFailure(Self.usage, isHelp: true)
            default: throw BenchFailure("unknown option \(argument)\n\(Self.usage)")
            }
        }
    }

    /// The scenarios selected, in table order.
    var selectedScenarios: [Scenario] {
        scenarios.isEmpty ? Scenario.allCases : Scenario.allCases.filter { scenarios.contains($0.rawValue) }
    }
}

/// Which implementation a measurement runs.
enum Side: String, Codable {
    /// Through Tern's public API.
    case tern
    /// Directly against the SQLite C API.
    case baseline
    /// Through the `sqlite3` shell, as a script (``SQLiteShell``).
    case shell
}

/// A reason the benchmark stops.
struct BenchFailure: Error, CustomStringConvertible {
    /// What went wrong.
    var description: String
    /// Whether this is the usage text asked for with `--help`.
    var isHelp = false

    init(_ description: String, isHelp: Bool = false) {
        self.description = description
        self.isHelp = isHelp
    }
}
