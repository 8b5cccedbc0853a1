import Foundation
import HearthCLI

exit(await CLI.main(Array(CommandLine.arguments.dropFirst())))
