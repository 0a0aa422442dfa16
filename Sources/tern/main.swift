import Foundation
import TernTool

exit(Tern.main(Array(CommandLine.arguments.dropFirst())))
