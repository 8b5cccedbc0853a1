import Foundation
import HearthModel
@_exported import HearthTesting
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
