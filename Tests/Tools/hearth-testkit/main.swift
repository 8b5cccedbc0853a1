import Foundation
import HearthModel
import HearthHTTP
import HearthStore

// Helper processes for crash tests: they do real work and report progress on stdout, line by
// line, so a test can kill them with SIGKILL at an arbitrary point and check what survived.
//
//   hearth-testkit store-writer DB   commits forever; after each commit prints "committed N"

/// Writes one line to stdout at once (no buffering, so a kill loses nothing already reported).
func report(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let args = Array(CommandLine.arguments.dropFirst())

switch args.first {
case "store-writer" where args.count == 2:
    let store = try await DocumentStore.open(path: args[1], clock: SystemClock())
    var n = 0
    while true {
        n += 1
        // Each commit creates one document and moves a counter: both or neither must survive.
        let item = try DocumentPath("crash/items/list/\(String(format: "%08d", n))")
        try await store.commit([
            .create(item, ["n": .int(Int64(n)), "payload": .string(String(repeating: "x", count: n % 200))]),
            .set(try DocumentPath("crash/counter"), ["n": .int(Int64(n))]),
        ])
        report("committed \(n)")
    }
case "http-echo" where args.count == 2:
    var config = HTTPServer.Configuration()
    config.port = Int(args[1]) ?? 0
    config.maxBodyBytes = 1000
    config.requestTimeout = .milliseconds(500)
    let server = HTTPServer(configuration: config) { request in
        if request.path == "/slow" { try? await Task.sleep(for: .seconds(5)) }
        if request.path == "/stream" {
            return HTTPServerResponse(status: 200, body: .stream { w in
                for i in 0..<3 { _ = await w.write(Array("chunk \(i)\n".utf8)); try? await Task.sleep(for: .milliseconds(50)) }
            })
        }
        return .text("\(request.method) \(request.path) \(request.body.count)")
    }
    try server.start()
    report("listening \(server.port)")
    try await Task.sleep(for: .seconds(3600))
default:
    FileHandle.standardError.write(Data("usage: hearth-testkit store-writer DB\n".utf8))
    exit(2)
}
