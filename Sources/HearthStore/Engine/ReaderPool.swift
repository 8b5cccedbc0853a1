import Synchronization

/// Read-only connections lent out one at a time. A read runs synchronously on the caller's thread
/// (a primary-key read takes a few microseconds, less than a hop to another thread would); WAL
/// lets readers run beside the writer. Idle connections beyond `capacity` are closed.
final class ReaderPool: Sendable {
    /// Confined by the pool: a box is only ever used by the caller holding it between take and put.
    final class Box: @unchecked Sendable {
        let connection: Connection
        init(_ connection: Connection) { self.connection = connection }
    }

    let path: String
    let capacity: Int
    private let idle = Mutex<[Box]>([])
    private let closed = Atomic<Bool>(false)

    init(path: String, capacity: Int) {
        self.path = path
        self.capacity = capacity
    }

    func withReader<T>(_ body: (Connection) throws -> T) throws -> T {
        guard !closed.load(ordering: .relaxed) else { throw StoreError.closed }
        let box = try idle.withLock { $0.popLast() } ?? Box(Connection(path: path, options: Connection.Options(readOnly: true)))
        defer { giveBack(box) }
        return try body(box.connection)
    }

    /// A lent connection back to the idle ones (closed instead past `capacity`, or once the pool is).
    private func giveBack(_ box: Box) {
        guard !closed.load(ordering: .relaxed) else { return }
        idle.withLock { pool in if pool.count < capacity { pool.append(box) } }
    }

    /// `withReader` for a thread that must not wait: nil when no connection is idle (opening one
    /// takes a while), and a lock held elsewhere fails `body`'s statements at once (SQLITE_BUSY)
    /// instead of waiting for it.
    func withIdleReaderNotWaiting<T>(_ body: (Connection) throws -> T) throws -> T? {
        guard !closed.load(ordering: .relaxed), let box = idle.withLock({ $0.popLast() }) else { return nil }
        defer { giveBack(box) }
        return try box.connection.withoutBusyWaits { try body(box.connection) }
    }

    /// Runs `body` in one read transaction, so every statement sees the same snapshot.
    func withSnapshot<T>(_ body: (Connection) throws -> T) throws -> T {
        try withReader { db in
            try db.execute("BEGIN DEFERRED")
            defer { try? db.execute("COMMIT") }
            return try body(db)
        }
    }

    func close() {
        closed.store(true, ordering: .relaxed)
        idle.withLock { $0.removeAll() }
    }
}
