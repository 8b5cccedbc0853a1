import Foundation
import HearthFunctions

/// A unit whose handlers take their process down in every way a handler can: the tests of
/// process isolation run it in workers and check that only the worker dies.
public enum CrashUnit: FunctionModule {
    public static let name = "CrashUnit"

    struct Numbers: Codable, Sendable { var a: Int; var b: Int }

    public static func register(_ fn: inout FunctionRegistry) {
        fn.onCall("crashPing") { (_: CallableRequest<Value>) in "pong" }

        /// The worker's process id (tests tell workers apart with it).
        fn.onCall("crashPid") { (_: CallableRequest<Value>) in Int(getpid()) }

        /// Overflows on large numbers: a trap.
        fn.onCall("crashAdd") { (req: CallableRequest<Numbers>) in req.data.a + req.data.b }

        /// A force-unwrap of nil.
        fn.onCall("crashUnwrap") { (req: CallableRequest<Value>) -> String in
            let missing: String? = req.data.stringValue
            return missing!
        }

        /// Never returns, never checks cancellation: only killing its worker stops it.
        fn.onCall("crashSpin", .init(timeout: .seconds(1))) { (_: CallableRequest<Value>) -> Int in
            var x: UInt64 = 1
            while x != 0 { x = x &* 6364136223846793005 &+ 1442695040888963407 | 1 }
            return Int(truncatingIfNeeded: x)
        }

        /// Allocates (and touches) memory until the worker's limit stops it.
        fn.onCall("crashHog") { (_: CallableRequest<Value>) -> Int in
            var blocks: [UnsafeMutableRawPointer] = []
            while true {
                guard let block = malloc(64 << 20) else { fatalError("out of memory after \(blocks.count * 64) MiB") }
                memset(block, 1, 64 << 20)
                blocks.append(block)
                if blocks.count > 1024 { return blocks.count }
            }
        }

        /// Exits the process with a status of the caller's choosing.
        fn.onCall("crashExit") { (req: CallableRequest<Int>) -> Int in exit(Int32(truncatingIfNeeded: req.data)) }

        /// Sleeps on the host clock, then answers (a call in flight while something else happens).
        fn.onCall("crashNap", .init(timeout: .seconds(120))) { (req: CallableRequest<Double>) -> Int in
            try await req.context.clock.sleep(for: .seconds(double: req.data))
            return Int(getpid())
        }

        /// Writes to stdout and stderr (the host logs both with the unit's name).
        fn.onCall("crashPrint") { (req: CallableRequest<String>) -> String in
            print("stdout: \(req.data)")
            FileHandle.standardError.write(Data("stderr: \(req.data)\n".utf8))
            req.logger.info("logged: \(req.data)")
            return req.data
        }

        /// A trigger that traps on every attempt, retried twice more.
        fn.onDocumentCreated("trapOnCreate", .init(document: "crash/{id}",
                                                   retry: .policy(.exponential(maxAttempts: 3, minBackoff: .seconds(1), maxBackoff: .seconds(1))))) { (event: DocumentEvent<Value>) in
            let divisor = event.after?.data["divisor"]?.intValue ?? 0
            _ = 1 / Int(divisor)
        }
    }
}
