import HearthFunctions

/// A unit for the delivery engine's tests: triggers and queues that record every run in documents
/// (`runs/{function}-{eventId}` counts runs, so duplicates show), fail on request, sleep on the
/// host clock, and enqueue tasks in every way a handler can.
public enum DeliveryUnit: FunctionModule {
    public static let name = "DeliveryUnit"

    struct Work: Codable, Sendable {
        /// Fail while the attempt's retry count is below this.
        var failUntil: Int?
        /// Fail the attempt with retry count i with the code failCodes[i] (a Firebase code name).
        var failCodes: [String]?
        /// Sleep this many seconds on the host clock first.
        var sleep: Double?
        var label: String?
    }

    struct EnqueueRequest: Codable, Sendable {
        var queue: String
        var data: Value?
        var id: String?
        var delaySeconds: Double?
        var scheduleTime: Timestamp?
        var deadlineSeconds: Double?
    }

    struct TransactionalRequest: Codable, Sendable {
        var taskID: String
        var doc: String
        var fail: Bool
    }

    /// Counts a run of `function` for `event` and keeps what it saw.
    static func record(_ docs: Documents, _ function: String, _ event: String, _ fields: [String: Value]) async throws {
        let ref = try docs.collection("runs").document("\(function)-\(event)")
        var update: [String: FieldValue] = ["count": .increment(1), "function": .value(.string(function)), "event": .value(.string(event))]
        for (k, v) in fields { update[k] = .value(v) }
        do {
            try await ref.update(update)
        } catch let e as HTTPSError where e.code == .notFound {
            var initial = fields
            initial["count"] = 1
            initial["function"] = .string(function)
            initial["event"] = .string(event)
            do { try await ref.create(initial) } catch let e as HTTPSError where e.code == .alreadyExists { try await ref.update(update) }
        }
    }

    public static func register(_ fn: inout FunctionRegistry) {
        // Every write to items/{id}: records the run and appends the value of `n` to the item's log
        // (in a transaction), so per-document order is visible.
        fn.onDocumentWritten("recordWrite", .init(document: "items/{itemId}", concurrency: 8)) { (event: DocumentEvent<Value>) in
            try await record(event.documents, "recordWrite", event.id, ["kind": .string(event.kind.rawValue), "item": .string(event.params["itemId"] ?? "")])
            let n = event.after?.data["n"] ?? .null
            let log = try event.documents.collection("orderLog").document(event.params["itemId"] ?? "?")
            try await event.documents.runTransaction { tx in
                let current = try await tx.get(log, [String: Value].self)?.data["seen"]?.arrayValue ?? []
                try tx.set(log, ["seen": Value.array(current + [n])])
            }
        }

        fn.onDocumentCreated("flaky", .init(document: "flaky/{id}", retry: true)) { (event: DocumentEvent<Value>) in
            let attempts = try event.documents.collection("flakyAttempts").document(event.params["id"] ?? "?")
            try await attempts.set(["touched": true] as [String: Value], merge: true)
            try await attempts.update(["n": .increment(1)])
            let n = try await attempts.get([String: Value].self)?.data["n"]?.intValue ?? 0
            let failTimes = event.after?.data["failTimes"]?.intValue ?? 0
            if n <= failTimes { throw HTTPSError(.unavailable, "flaky failure \(n)") }
            try await record(event.documents, "flaky", event.id, ["attempts": .int(n)])
        }

        // Writes to seq/{id}: appends `n` to seqLog/{id}; a write with failOnce fails its first attempt.
        fn.onDocumentWritten("orderedRetry", .init(document: "seq/{id}", retry: true)) { (event: DocumentEvent<Value>) in
            guard let after = event.after?.data, let n = after["n"] else { return }
            let id = event.params["id"] ?? "?"
            if after["failOnce"] == true {
                let marker = try event.documents.collection("seqFailed").document("\(id)-\(event.id)")
                if try await marker.get([String: Value].self) == nil {
                    try await marker.set(["at": Value.timestamp(event.context.clock.now())])
                    throw HTTPSError(.unavailable, "first attempt of \(event.id) fails")
                }
            }
            let log = try event.documents.collection("seqLog").document(id)
            try await log.set(["touched": true] as [String: Value], merge: true)
            try await log.update(["seen": .arrayUnion([n])])
        }

        // Takes its process down (until handlers run in worker processes): its delivery must be
        // dead-lettered after the crash, not run again at every restart.
        fn.onDocumentCreated("trapOnCreate", "traps/{id}") { (event: DocumentEvent<Value>) in
            let divisor = event.after?.data["divisor"]?.intValue ?? 0
            _ = 1 / Int(divisor)
        }

        // Sleeps an hour on the host clock: still running when its runtime goes away.
        fn.onDocumentCreated("hang", "hang/{id}") { (event: DocumentEvent<Value>) in
            try await event.context.clock.sleep(for: .seconds(3600))
        }

        fn.onDocumentCreated("broken", "broken/{id}") { (event: DocumentEvent<Value>) in
            throw HTTPSError(.internal, "always fails on \(event.path)")
        }

        fn.onDocumentDeleted("cleanup", "lists/{listId}") { (event: DocumentEvent<Value>) in
            try await record(event.documents, "cleanup", event.id, ["list": .string(event.params["listId"] ?? ""),
                                                                 "hadTitle": event.before?.data["title"] ?? .null])
        }

        fn.onTaskDispatched("work", .init(retry: .exponential(maxAttempts: 3, minBackoff: .seconds(1), maxBackoff: .seconds(10), maxDoublings: 2),
                            rateLimits: RateLimits(maxDispatchesPerSecond: 10, maxConcurrentDispatches: 100))) { (req: TaskRequest<Work>) in
            if let seconds = req.data.sleep { try await req.context.clock.sleep(for: .seconds(double: seconds)) }
            try await record(req.documents, "work", req.id, [
                "retryCount": .int(Int64(req.retryCount)), "executionCount": .int(Int64(req.executionCount)),
                "scheduledTime": .timestamp(req.scheduledTime), "ranAt": .timestamp(req.context.clock.now()),
                "previousResponse": req.previousResponse.map { .int(Int64($0)) } ?? .null, "retryReason": req.retryReason.map { .string($0) } ?? .null,
                "queue": .string(req.queueName), "label": req.data.label.map { .string($0) } ?? .null,
            ])
            if let failUntil = req.data.failUntil, req.retryCount < failUntil {
                throw HTTPSError(.unavailable, "failing attempt \(req.retryCount + 1)")
            }
            if let codes = req.data.failCodes, req.retryCount < codes.count {
                throw HTTPSError(FunctionsErrorCode(name: codes[req.retryCount]) ?? .unknown, "failing attempt \(req.retryCount + 1)")
            }
        }

        fn.onTaskDispatched("slow", .init(rateLimits: RateLimits(maxConcurrentDispatches: 2))) { (req: TaskRequest<Work>) in
            try await req.context.clock.sleep(for: .seconds(double: req.data.sleep ?? 10))
            try await record(req.documents, "slow", req.id, ["ranAt": .timestamp(req.context.clock.now())])
        }

        // Only a concurrency limit: the rate stays Firebase's default, 500 per second.
        fn.onTaskDispatched("bounded", .init(rateLimits: RateLimits(maxConcurrentDispatches: 1000))) { (req: TaskRequest<Value>) in
            try await record(req.documents, "bounded", req.id, ["ranAt": .timestamp(req.context.clock.now())])
        }

        fn.onTaskDispatched("noop", .init(rateLimits: RateLimits(maxDispatchesPerSecond: 100_000, maxConcurrentDispatches: 1000))) { (_: TaskRequest<Value>) in }

        fn.onTaskDispatched("timeboxed", .init(dispatchDeadline: .seconds(30))) { (req: TaskRequest<Work>) in
            try await req.context.clock.sleep(for: .seconds(double: req.data.sleep ?? 60))
        }

        // Who called: for the sign-in flows that end in a callable.
        fn.onCall("caller") { (req: CallableRequest<Value>) -> Value in
            guard let auth = req.auth else { return .null }
            return ["uid": .string(auth.uid), "claims": .map(auth.token)]
        }

        fn.onCall("enqueue") { (req: CallableRequest<EnqueueRequest>) -> String in
            var options = TaskOptions(id: req.data.id)
            options.scheduleDelay = req.data.delaySeconds.map { .seconds(double: $0) }
            options.scheduleTime = req.data.scheduleTime
            options.dispatchDeadline = req.data.deadlineSeconds.map { .seconds(double: $0) }
            return try await req.context.tasks.queue(req.data.queue).enqueue(req.data.data ?? .null, options: options)
        }

        fn.onCall("deleteTask") { (req: CallableRequest<[String: String]>) -> Value in
            try await req.context.tasks.queue(req.data["queue"] ?? "").delete(req.data["id"] ?? "")
            return .null
        }

        // A document write and a task in one transaction; `fail` throws after both, rolling back both.
        fn.onCall("transactional") { (req: CallableRequest<TransactionalRequest>) -> Value in
            let ref = try req.documents.collection("txDocs").document(req.data.doc)
            try await req.documents.runTransaction { tx in
                _ = try await tx.exists(ref)
                try tx.set(ref, ["written": true] as [String: Value])
                try tx.enqueue("work", Work(label: "from-transaction"), options: TaskOptions(id: req.data.taskID))
                if req.data.fail { throw HTTPSError(.failedPrecondition, "rolled back on purpose") }
            }
            return "committed"
        }

        fn.onCall("batch") { (req: CallableRequest<TransactionalRequest>) -> Value in
            let batch = req.documents.batch()
            try batch.set(try req.documents.collection("txDocs").document(req.data.doc), ["written": true] as [String: Value])
            try batch.enqueue("work", Work(label: "from-batch"), options: TaskOptions(id: req.data.taskID))
            try await batch.commit()
            return "committed"
        }

        // Enqueues `count` no-op tasks in commits of 500 (the schedule fan-out benchmark's shape).
        fn.onCall("fanOut") { (req: CallableRequest<Int>) -> Int in
            var done = 0
            while done < req.data {
                let n = min(500, req.data - done)
                try await req.context.tasks.queue("noop").enqueue(contentsOf: (0..<n).map { (Value.int(Int64(done + $0)), TaskOptions()) })
                done += n
            }
            return done
        }

        // The crash test's producer: one document per call, and for even numbers a task in the same
        // batch (its id makes a re-sent call fail with already-exists instead of enqueuing twice).
        fn.onCall("produce") { (req: CallableRequest<Int>) -> Int in
            let batch = req.documents.batch()
            try batch.set(try req.documents.collection("crash").document("c\(req.data)"), ["i": Value.int(Int64(req.data))])
            if req.data % 2 == 0 {
                try batch.enqueue("crashTask", ["i": Value.int(Int64(req.data))], options: TaskOptions(id: "task-\(req.data)"))
            }
            try await batch.commit()
            return req.data
        }

        // With retries, as Firebase requires for an event to survive a crash of the process running
        // it: an attempt that dies with its process counts, and a trigger without retries is then
        // dead-lettered rather than run again.
        fn.onDocumentCreated("crashWrite", .init(document: "crash/{id}", retry: true, concurrency: 32)) { (event: DocumentEvent<Value>) in
            try await record(event.documents, "crashWrite", event.params["id"] ?? "?", [:])
        }

        fn.onTaskDispatched("crashTask", .init(rateLimits: RateLimits(maxDispatchesPerSecond: 10_000, maxConcurrentDispatches: 64))) { (req: TaskRequest<Value>) in
            try await record(req.documents, "crashTask", req.id, [:])
        }

        // For Scripts/bench/delivery: a no-op trigger, a paced queue, and a tick that fans out.
        fn.onDocumentCreated("benchTrigger", .init(document: "bench/{id}", concurrency: 64)) { (_: DocumentEvent<Value>) in }

        fn.onTaskDispatched("paced", .init(rateLimits: RateLimits(maxDispatchesPerSecond: 200, maxConcurrentDispatches: 100))) { (_: TaskRequest<Value>) in }

        fn.onSchedule("fanOutTick", .init(schedule: "0 0 1 1 *", timeout: .seconds(900))) { event in
            let count = 100_000
            var done = 0
            while done < count {
                let n = min(500, count - done)
                try await event.context.tasks.queue("noop").enqueue(contentsOf: (0..<n).map { (Value.int(Int64(done + $0)), TaskOptions()) })
                done += n
            }
        }

        fn.onSchedule("seoulTick", .init(schedule: "every 5 minutes", timeZone: "Asia/Seoul")) { event in
            try await record(event.documents, "seoulTick", event.scheduleTime.rfc3339, ["at": .timestamp(event.context.clock.now())])
        }

        fn.onSchedule("nightly", .init(schedule: "30 2 * * *", timeZone: "America/New_York")) { event in
            try await record(event.documents, "nightly", event.scheduleTime.rfc3339, ["at": .timestamp(event.context.clock.now())])
        }

        fn.onUserCreated("welcome") { event in
            try await event.documents.collection("profiles").document(event.user.uid).set(["email": event.user.email.map { Value.string($0) } ?? .null] as [String: Value])
        }

        fn.onUserDeleted("purge") { event in
            try await event.documents.recursiveDelete(try event.documents.collection("members").document(event.user.uid))
            try await record(event.documents, "purge", event.id, ["uid": .string(event.user.uid)])
        }
    }
}
