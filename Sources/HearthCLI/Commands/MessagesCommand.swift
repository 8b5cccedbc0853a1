import Foundation
import HearthModel
import HearthRuntime

/// `hearth messages list`: the pushes functions sent, from the runtime's outbox.
struct MessagesCommand: Command {
    static let path = ["messages"]
    static let summary = "List the pushes functions sent (the messaging outbox)"
    static let help = """
        usage: hearth messages list [--after SEQ] [--limit N]

        Every push a function sent with context.messaging, oldest first, as JSON lines: its
        sequence, time, function, token, title, body, data, badge, sound, and the outcome
        ("logged" in the log messaging mode; "sent" with FCM's message name, or FCM's refusal).
        --after lists only entries after that sequence (to follow along).
        \(CommonOptions.help)
        """

    var common: CommonOptions
    var after: Int64
    var limit: Int

    static func parse(_ arguments: [String]) throws(UsageError) -> MessagesCommand {
        guard arguments.first == "list" else { throw UsageError(arguments.isEmpty ? "missing a subcommand: list" : "unknown subcommand '\(arguments[0])' (list)") }
        let args = try Arguments(Array(arguments.dropFirst()), valued: CommonOptions.valued.union(["after", "limit"]), boolean: [])
        _ = try args.requirePositionals([])
        let limit = try args.int("limit") ?? 100
        guard (1...100_000).contains(limit) else { throw UsageError("--limit must be between 1 and 100000") }
        var after: Int64 = 0
        if let text = args.value("after") {
            guard let v = Int64(text), v >= 0 else { throw UsageError("--after is a sequence number, 0 or more (got '\(text)')") }
            after = v
        }
        return MessagesCommand(common: try CommonOptions(args), after: after, limit: limit)
    }

    func run(_ io: CommandIO) async -> Int32 {
        guard let runtime = await RuntimeSetup.start(common, io: io, quietLevel: .warning) else { return ExitCode.failure }
        defer { runtime.close() }
        do {
            for entry in try runtime.outbox(after: after, limit: limit) {
                io.out(JSONWriter.string(MessagesCommand.summary(entry), options: .tagged))
            }
            return ExitCode.success
        } catch { return DocsJSON.fail(error, io) }
    }

    static func summary(_ e: OutboxEntry) -> Value {
        var m: [String: Value] = ["seq": .int(e.sequence), "time": .string(e.time.rfc3339), "function": .string(e.function),
                                  "token": .string(e.message.token), "outcome": .string(e.outcome),
                                  "data": .map(e.message.data.mapValues { .string($0) })]
        if let v = e.message.title { m["title"] = .string(v) }
        if let v = e.message.body { m["body"] = .string(v) }
        if let v = e.message.badge { m["badge"] = .int(Int64(v)) }
        if let v = e.message.sound { m["sound"] = .string(v) }
        if let v = e.messageID { m["messageId"] = .string(v) }
        return .map(m)
    }
}
