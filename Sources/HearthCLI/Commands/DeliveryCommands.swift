import Foundation
import HearthModel
import HearthRuntime

/// `hearth deliveries list|retry|drop`: the delivery queue and its dead letters.
struct DeliveriesCommand: Command {
    static let path = ["deliveries"]
    static let summary = "List queued deliveries and dead letters; retry or drop them"
    static let help = """
        usage: hearth deliveries list [--dead | --state pending|running|dead] [--function NAME] [--limit N]
               hearth deliveries retry ID
               hearth deliveries drop ID

        Deliveries are the events waiting for trigger, task and schedule functions, in the runtime's
        database: list prints them as JSON lines (oldest first; --dead only dead letters). retry makes
        a dead letter pending again with its attempts reset; drop deletes a pending or dead delivery.
        A serving runtime picks up the change within its poll interval.
        \(CommonOptions.help)
        """

    enum Action: Equatable, Sendable {
        case list(state: DeliveryState?, function: String?, limit: Int)
        case retry(Int64)
        case drop(Int64)
    }

    var common: CommonOptions
    var action: Action

    static func parse(_ arguments: [String]) throws(UsageError) -> DeliveriesCommand {
        guard let verb = arguments.first else { throw UsageError("missing a subcommand: list, retry or drop") }
        let args = try Arguments(Array(arguments.dropFirst()), valued: CommonOptions.valued.union(["state", "function", "limit"]), boolean: ["dead"])
        func id() throws(UsageError) -> Int64 {
            let p = try args.requirePositionals(["a delivery id"])
            guard let id = Int64(p[0]), id > 0 else { throw UsageError("a delivery id is a positive number (got '\(p[0])')") }
            return id
        }
        switch verb {
        case "list":
            _ = try args.requirePositionals([])
            var state: DeliveryState?
            if let name = args.value("state") {
                guard let s = DeliveryState(name: name) else {
                    throw UsageError("--state must be pending, running or dead (got '\(name)')")
                }
                state = s
            }
            if args.flag("dead") {
                if state != nil && state != .dead { throw UsageError("--dead and --state \(state!.name) contradict each other") }
                state = .dead
            }
            let limit = try args.int("limit") ?? 100
            guard (1...100_000).contains(limit) else { throw UsageError("--limit must be between 1 and 100000") }
            return DeliveriesCommand(common: try CommonOptions(args), action: .list(state: state, function: args.value("function"), limit: limit))
        case "retry": return DeliveriesCommand(common: try CommonOptions(args), action: .retry(try id()))
        case "drop": return DeliveriesCommand(common: try CommonOptions(args), action: .drop(try id()))
        default: throw UsageError("unknown subcommand '\(verb)' (list, retry or drop)")
        }
    }

    func run(_ io: CommandIO) async -> Int32 {
        guard let runtime = await RuntimeSetup.start(common, io: io, quietLevel: .warning) else { return ExitCode.failure }
        defer { runtime.close() }
        do {
            switch action {
            case .list(let state, let function, let limit):
                for d in try runtime.deliveryList(function: function, state: state, limit: limit) {
                    io.out(JSONWriter.string(d.summary, options: .tagged))
                }
            case .retry(let id):
                try await runtime.retryDelivery(id)
                io.out("delivery \(id) is pending again")
            case .drop(let id):
                try await runtime.dropDelivery(id)
                io.out("delivery \(id) dropped")
            }
            return ExitCode.success
        } catch { return DocsJSON.fail(error, io) }
    }
}

/// `hearth tasks enqueue|delete`
struct TasksCommand: Command {
    static let path = ["tasks"]
    static let summary = "Enqueue a task in a task queue, or delete a pending one"
    static let help = """
        usage: hearth tasks enqueue QUEUE [--data JSON | --data-file FILE] [--id ID]
                                    [--delay SECONDS | --at TIME] [--deadline SECONDS]
               hearth tasks delete QUEUE ID

        QUEUE is an onTaskDispatched function. The task's data is JSON (Hearth's tags allowed); --id
        makes the enqueue idempotent within the dedupe window (a repeat fails with already-exists);
        --delay or --at (RFC 3339) schedules it, at most 30 days ahead; --deadline bounds one attempt
        (15 to 1800 s). Prints the task id. A serving runtime runs it within its poll interval.
        \(CommonOptions.help)
        """

    enum Action: Equatable, Sendable {
        case enqueue(queue: String, data: CallCommand.DataSource, id: String?, delay: Double?, at: String?, deadline: Double?)
        case delete(queue: String, id: String)
    }

    var common: CommonOptions
    var action: Action

    static func parse(_ arguments: [String]) throws(UsageError) -> TasksCommand {
        guard let verb = arguments.first else { throw UsageError("missing a subcommand: enqueue or delete") }
        let args = try Arguments(Array(arguments.dropFirst()), valued: CommonOptions.valued.union(CallCommand.DataSource.options).union(["id", "delay", "at", "deadline"]))
        switch verb {
        case "enqueue":
            let p = try args.requirePositionals(["a queue name"])
            let data = try CallCommand.DataSource(args)
            if args.value("delay") != nil && args.value("at") != nil { throw UsageError("use either --delay or --at, not both") }
            func seconds(_ name: String) throws(UsageError) -> Double? {
                guard let v = args.value(name) else { return nil }
                guard let d = Double(v), d.isFinite, d >= 0 else { throw UsageError("--\(name) needs a number of seconds (got '\(v)')") }
                return d
            }
            return TasksCommand(common: try CommonOptions(args), action: .enqueue(queue: p[0], data: data, id: args.value("id"),
                                                                                   delay: try seconds("delay"), at: args.value("at"), deadline: try seconds("deadline")))
        case "delete":
            let p = try args.requirePositionals(["a queue name", "a task id"])
            return TasksCommand(common: try CommonOptions(args), action: .delete(queue: p[0], id: p[1]))
        default:
            throw UsageError("unknown subcommand '\(verb)' (enqueue or delete)")
        }
    }

    func run(_ io: CommandIO) async -> Int32 {
        guard let runtime = await RuntimeSetup.start(common, io: io, quietLevel: .warning) else { return ExitCode.failure }
        defer { runtime.close() }
        do {
            switch action {
            case .enqueue(let queue, let source, let id, let delay, let at, let deadline):
                guard let data = source.read(io) else { return ExitCode.usage }
                var start = TaskSpec.Start.now
                switch (delay, at) {
                case (.some, .some): throw UsageError("give --delay or --at, not both")
                case (let delay?, nil): start = .after(.seconds(double: delay))
                case (nil, let at?):
                    guard let t = Timestamp(rfc3339: at) else { throw UsageError("--at needs an RFC 3339 time such as 2026-12-01T09:00:00Z (got '\(at)')") }
                    start = .at(t)
                case (nil, nil): break
                }
                let task = TaskSpec(queue: queue, data: data, id: id, start: start, dispatchDeadline: deadline.map { .seconds(double: $0) })
                io.out(try await runtime.enqueue([task])[0])
            case .delete(let queue, let id):
                try await runtime.deleteTask(queue: queue, id: id)
                io.out("task \(id) deleted")
            }
            return ExitCode.success
        } catch let e as UsageError {
            io.err("error: \(e.message)")
            return ExitCode.usage
        } catch { return DocsJSON.fail(error, io) }
    }
}

/// `hearth schedule list|run`
struct ScheduleCommand: Command {
    static let path = ["schedule"]
    static let summary = "List schedule functions with their next firing, or fire one now"
    static let help = """
        usage: hearth schedule list [--json]
               hearth schedule run NAME

        list prints each onSchedule function with its expression, time zone, last firing and next
        firing (also in its own zone). run queues a firing of NAME now, outside its timing; a serving
        runtime runs it within its poll interval.
        \(CommonOptions.help)
        """

    enum Action: Equatable, Sendable {
        case list(json: Bool)
        case run(String)
    }

    var common: CommonOptions
    var action: Action

    static func parse(_ arguments: [String]) throws(UsageError) -> ScheduleCommand {
        guard let verb = arguments.first else { throw UsageError("missing a subcommand: list or run") }
        let args = try Arguments(Array(arguments.dropFirst()), valued: CommonOptions.valued, boolean: ["json"])
        switch verb {
        case "list":
            _ = try args.requirePositionals([])
            return ScheduleCommand(common: try CommonOptions(args), action: .list(json: args.flag("json")))
        case "run":
            let p = try args.requirePositionals(["a schedule function name"])
            return ScheduleCommand(common: try CommonOptions(args), action: .run(p[0]))
        default:
            throw UsageError("unknown subcommand '\(verb)' (list or run)")
        }
    }

    func run(_ io: CommandIO) async -> Int32 {
        guard let runtime = await RuntimeSetup.start(common, io: io, quietLevel: .warning) else { return ExitCode.failure }
        defer { runtime.close() }
        do {
            switch action {
            case .list(let json):
                let table = try runtime.scheduleTable()
                if json {
                    io.out(JSONWriter.string(.array(table.map(\.value)), options: JSONWriteOptions(style: .tagged, sortKeys: true, pretty: true)))
                } else if table.isEmpty {
                    io.out("no schedule functions")
                } else {
                    for s in table {
                        io.out("\(s.function)  \"\(s.expression)\" (\(s.timeZone))  next: \(s.nextFireLocal ?? "never")  last: \(s.lastFire?.rfc3339 ?? "never")")
                    }
                }
            case .run(let name):
                try await runtime.runScheduleNow(name)
                io.out("\(name) fired")
            }
            return ExitCode.success
        } catch { return DocsJSON.fail(error, io) }
    }
}
