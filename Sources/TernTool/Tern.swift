/// The `tern` command-line tool as a library, so that tests can run it in-process.
public enum Tern {
    /// The tool's version.
    public static let version = "0.1.0"

    /// Runs the tool with the given arguments (without the program name).
    ///
    /// - Parameter arguments: The command-line arguments.
    /// - Returns: The exit status: 0 success, 1 failure, 2 usage error.
    public static func main(_ arguments: [String]) -> Int32 {
        if arguments == ["--version"] {
            print("tern \(version)")
            return 0
        }
        return 2
    }
}
