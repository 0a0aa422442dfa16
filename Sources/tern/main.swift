import Foundation
import TernTool

exit(await Tern.main(Array(CommandLine.arguments.dropFirst())))
