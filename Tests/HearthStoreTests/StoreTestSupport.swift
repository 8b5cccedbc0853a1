import Foundation
import HearthModel
@testable import HearthStore
import Synchronization
import Testing

// Shared helpers for the store tests: a fresh database per test, short path constructors, error
// expectations, a seeded generator and timeouts for every wait on concurrent work.

/// Opens a store on a new temporary database with a `ManualClock`, runs `body`, then closes the
/// store and removes the database's directory.
@discardableResult
func withStore<T>(clock: ManualClock = ManualClock(), _ body: (DocumentStore, ManualClock) async throws -> T) async throws -> T {
    let path = temporaryStorePath()
    let store = try await DocumentStore.open(path: path, clock: clock)
    defer {
        store.close()
        try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path)
    }
    return try await body(store, clock)
}

func doc(_ path: String) throws -> DocumentPath { try DocumentPath(path) }
func coll(_ path: String) throws -> CollectionPath { try CollectionPath(path) }
func field(_ path: String) throws -> FieldPath { try FieldPath(path) }

extension DocumentStore {
    var sqlite: SQLiteEngine { engine as! SQLiteEngine }

    /// Every change in the feed, oldest first.
    func allChanges() async throws -> [DocumentChange] { try await engine.changes(after: 0, limit: 100_000) }

    /// Rows in the documents table, whatever their collection.
    func documentRowCount() throws -> Int {
        try sqlite.readers.withReader { Int(try $0.scalarInt("SELECT count(*) FROM documents") ?? 0) }
    }

    /// Rows in the field index.
    func indexRowCount() throws -> Int {
        try sqlite.readers.withReader { Int(try $0.scalarInt("SELECT count(*) FROM field_index") ?? 0) }
    }

    /// The ids of a query's results, in order.
    func ids(_ spec: QuerySpec) async throws -> [String] { try await query(spec).map(\.path.id) }

    /// The full paths of a query's results, in order.
    func paths(_ spec: QuerySpec) async throws -> [String] { try await query(spec).map(\.path.description) }
}

/// Expects `body` to throw an `HTTPSError` with `code` (and a message containing `message`, when
/// given); returns the error for further checks.
@discardableResult
func expectError(_ code: FunctionsErrorCode, _ message: String? = nil, sourceLocation: SourceLocation = #_sourceLocation,
                 _ body: () async throws -> Void) async -> HTTPSError? {
    do {
        try await body()
        Issue.record("expected \(code.rawValue) but nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as HTTPSError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        if let message {
            #expect(error.message.contains(message), "message '\(error.message)' should mention '\(message)'", sourceLocation: sourceLocation)
        }
        return error
    } catch {
        Issue.record("expected HTTPSError \(code.rawValue), got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// A value nested `levels` deep: maps only, or maps and arrays alternating (outermost first).
func nestedValue(levels: Int, alternating: Bool = false) -> Value {
    var v: Value = .map([:])
    for level in stride(from: levels - 1, through: 1, by: -1) {
        v = alternating && level % 2 == 1 ? .array([v]) : .map(["n": v])
    }
    return v
}

// MARK: randomness

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny seedable generator, so randomized tests replay
/// exactly from their seed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

// MARK: timeouts and signals

struct TimeoutError: Error, CustomStringConvertible {
    var seconds: Double
    var description: String { "timed out after \(seconds) s" }
}

/// Runs `operation`, failing with `TimeoutError` when it takes longer than `seconds` of wall time,
/// so a hang fails the test instead of stalling the run. The operation and the timer race in
/// unstructured tasks (a task group would wait for a hung child); the loser is cancelled.
func withTimeout<T: Sendable>(seconds: Double = 60, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
        let race = Race(continuation)
        let work = Task {
            do { race.finish(.success(try await operation())) } catch { race.finish(.failure(error)) }
        }
        let timer = Task {
            try await Task.sleep(for: .seconds(seconds))
            if race.finish(.failure(TimeoutError(seconds: seconds))) { work.cancel() }
        }
        race.onFinish { timer.cancel() }
    }
}

/// Resumes a continuation once, with whichever result comes first.
final class Race<T: Sendable>: Sendable {
    private let state: Mutex<(continuation: CheckedContinuation<T, Error>?, onFinish: (@Sendable () -> Void)?, finished: Bool)>

    init(_ continuation: CheckedContinuation<T, Error>) { state = Mutex((continuation, nil, false)) }

    func onFinish(_ action: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { s -> Bool in
            if s.finished { return true }
            s.onFinish = action
            return false
        }
        if runNow { action() }
    }

    @discardableResult
    func finish(_ result: Result<T, Error>) -> Bool {
        let taken = state.withLock { s -> (CheckedContinuation<T, Error>, (@Sendable () -> Void)?)? in
            guard let c = s.continuation else { return nil }
            s.continuation = nil
            s.finished = true
            defer { s.onFinish = nil }
            return (c, s.onFinish)
        }
        guard let (continuation, action) = taken else { return false }
        continuation.resume(with: result)
        action?()
        return true
    }
}

/// Lets `parties` tasks wait until all of them have arrived (no polling, no sleeps).
final class Barrier: Sendable {
    private let state: Mutex<(arrived: Int, waiters: [CheckedContinuation<Void, Never>])>
    private let parties: Int

    init(parties: Int) {
        self.parties = parties
        state = Mutex((0, []))
    }

    func arriveAndWait() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let release: [CheckedContinuation<Void, Never>] = state.withLock { s in
                s.arrived += 1
                s.waiters.append(c)
                guard s.arrived >= parties else { return [] }
                defer { s.waiters = [] }
                return s.waiters
            }
            for w in release { w.resume() }
        }
    }
}

/// A thread-safe counter or list for recording what concurrent code saw.
final class Recorder<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])
    func append(_ item: Element) { items.withLock { $0.append(item) } }
    var all: [Element] { items.withLock { $0 } }
    var count: Int { items.withLock { $0.count } }
}

/// One field of an `update`: a dotted path and its new value.
func upd(_ path: String, _ value: Value) throws -> (FieldPath, Value) { (try FieldPath(path), value) }
