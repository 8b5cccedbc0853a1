import HearthModel
import Synchronization

/// Exclusive per-document locks for transactions, as Firestore's server SDKs take them: a
/// transaction locks each document it reads and holds the locks until it commits or rolls back, so
/// two transactions incrementing one counter run one after the other instead of failing.
///
/// Waiters are served first come, first served; a lock passes to a transaction, so every wait of
/// that transaction for it ends together (a unit may read one document twice at once). Before a
/// transaction starts waiting, the table follows who waits for whom from the lock's holder and the
/// waiters ahead; if that leads back to the requester, waiting would deadlock, and the requester is
/// aborted instead (its caller retries after releasing its own locks). A transaction may wait for
/// several locks at once, so waits are kept per transaction and the search visits each once.
///
/// Only transactions between `begin` and `releaseAll` take locks: a read still on its way when its
/// transaction ended is refused rather than left holding a lock nobody will release.
final class LockTable: Sendable {
    private struct Waiter {
        let txn: UInt64
        let token: UInt64
        let continuation: CheckedContinuation<Void, Error>
    }

    private struct State {
        var live: Set<UInt64> = []
        var owner: [String: UInt64] = [:]
        var queue: [String: [Waiter]] = [:]
        /// The paths each transaction waits for.
        var waitingOn: [UInt64: Set<String>] = [:]
        var held: [UInt64: Set<String>] = [:]

        /// Takes every wait of `txn` for `path` (or just the one with `token`) out of the queue.
        mutating func removeWaits(of txn: UInt64, token: UInt64? = nil, from path: String) -> [CheckedContinuation<Void, Error>] {
            guard var q = queue[path] else { return [] }
            let taken = q.filter { $0.txn == txn && (token == nil || $0.token == token) }
            guard !taken.isEmpty else { return [] }
            q.removeAll { $0.txn == txn && (token == nil || $0.token == token) }
            queue[path] = q.isEmpty ? nil : q
            if !q.contains(where: { $0.txn == txn }) {
                waitingOn[txn]?.remove(path)
                if waitingOn[txn]?.isEmpty == true { waitingOn[txn] = nil }
            }
            return taken.map(\.continuation)
        }
    }

    private let state = Mutex(State())
    private let tokens = Atomic<UInt64>(0)
    /// Changes whenever a wait is queued or ends (tests wait on it for "two transactions waiting").
    let changes = Changes()

    /// Lets `txn` take locks (until `releaseAll`).
    func begin(_ txn: UInt64) {
        state.withLock { _ = $0.live.insert(txn) }
    }

    /// Locks `path` for `txn`, waiting for earlier holders; throws `aborted` instead of deadlocking,
    /// `invalid-argument` once the transaction has ended (`TransactionManager.notOpen`), and
    /// `CancellationError` when the waiting task is cancelled (it leaves the queue at once; the
    /// transaction keeps the locks it holds).
    func acquire(_ path: String, for txn: UInt64) async throws {
        let token = tokens.add(1, ordering: .relaxed).newValue
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, Error>) in
                let outcome: Result<Bool, any Error> = state.withLock { s in
                    guard s.live.contains(txn) else {
                        return .failure(TransactionManager.notOpen(txn))
                    }
                    guard let holder = s.owner[path], holder != txn else {
                        s.owner[path] = txn
                        s.held[txn, default: []].insert(path)
                        return .success(true)
                    }
                    // Checked under the lock: a cancellation either lands before this (and is seen
                    // here) or after the waiter is queued (and `withdraw` finds it).
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if LockTable.wouldDeadlock(s, requester: txn, path: path) {
                        return .failure(HTTPSError(.aborted, "transaction aborted to break a deadlock on \(path); retry"))
                    }
                    s.queue[path, default: []].append(Waiter(txn: txn, token: token, continuation: c))
                    s.waitingOn[txn, default: []].insert(path)
                    return .success(false)
                }
                switch outcome {
                case .success(true): c.resume()
                case .success(false): changes.changed()
                case .failure(let e): c.resume(throwing: e)
                }
            }
        } onCancel: {
            let withdrawn = state.withLock { $0.removeWaits(of: txn, token: token, from: path) }
            if !withdrawn.isEmpty { changes.changed() }
            for c in withdrawn { c.resume(throwing: CancellationError()) }
        }
    }

    /// Whether `requester` waiting for `path` closes a cycle of waits. Its own earlier waits for the
    /// same path are not in its way: the lock passes to all of them at once.
    private static func wouldDeadlock(_ s: State, requester: UInt64, path: String) -> Bool {
        var visited: Set<UInt64> = []
        var frontier = blockers(s, path: path, before: nil).filter { $0 != requester }
        while let t = frontier.popLast() {
            if t == requester { return true }
            guard visited.insert(t).inserted else { continue }
            for next in s.waitingOn[t] ?? [] { frontier += blockers(s, path: next, before: t) }
        }
        return false
    }

    /// Who a waiter on `path` waits for: the holder and the waiters queued ahead of `before`'s first wait.
    private static func blockers(_ s: State, path: String, before txn: UInt64?) -> [UInt64] {
        var out: [UInt64] = s.owner[path].map { [$0] } ?? []
        for w in s.queue[path] ?? [] {
            if w.txn == txn { break }
            out.append(w.txn)
        }
        return out
    }

    /// Ends `txn`: releases every lock it holds (each passes to the next transaction waiting for it)
    /// and fails every wait it still has with `aborted`.
    func releaseAll(_ txn: UInt64) {
        var grants: [CheckedContinuation<Void, Error>] = []
        var aborted: [CheckedContinuation<Void, Error>] = []
        state.withLock { s in
            s.live.remove(txn)
            for path in s.waitingOn[txn] ?? [] { aborted += s.removeWaits(of: txn, from: path) }
            s.waitingOn[txn] = nil
            for path in s.held.removeValue(forKey: txn) ?? [] {
                s.owner[path] = nil
                guard let next = s.queue[path]?.first?.txn else { continue }
                s.owner[path] = next
                s.held[next, default: []].insert(path)
                grants += s.removeWaits(of: next, from: path)
            }
        }
        if !grants.isEmpty || !aborted.isEmpty { changes.changed() }
        for c in grants { c.resume() }
        for c in aborted { c.resume(throwing: HTTPSError(.aborted, "transaction ended while waiting for a lock")) }
    }

    var lockCount: Int { state.withLock { $0.owner.count } }
    var waiterCount: Int { state.withLock { $0.queue.values.reduce(0) { $0 + $1.count } } }
}
