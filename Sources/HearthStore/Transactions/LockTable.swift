import HearthModel
import Synchronization

/// Exclusive per-document locks for transactions, as Firestore's server SDKs take them: a
/// transaction locks each document it reads and holds the locks until it commits or rolls back, so
/// two transactions incrementing one counter run one after the other instead of failing.
///
/// Waiters are served first come, first served. Before a transaction starts waiting, the table
/// follows the chain of who waits for whom from the lock's holder and the waiters ahead; if the
/// chain leads back to the requester, waiting would deadlock, and the requester is aborted instead
/// (its caller retries after releasing its own locks). Each transaction waits for at most one lock,
/// so the chain is a path and the check is linear.
final class LockTable: Sendable {
    private struct Waiter {
        let txn: UInt64
        let continuation: CheckedContinuation<Void, Error>
    }

    private struct State {
        var owner: [String: UInt64] = [:]
        var queue: [String: [Waiter]] = [:]
        var waitingOn: [UInt64: String] = [:]
        var held: [UInt64: Set<String>] = [:]
    }

    private let state = Mutex(State())

    /// Locks `path` for `txn`, waiting for earlier holders; throws `aborted` instead of deadlocking,
    /// and `CancellationError` when the waiting task is cancelled (it leaves the queue at once; the
    /// transaction keeps the locks it already holds until it ends).
    func acquire(_ path: String, for txn: UInt64) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, Error>) in
                let outcome: Result<Bool, any Error> = state.withLock { s in
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
                    s.queue[path, default: []].append(Waiter(txn: txn, continuation: c))
                    s.waitingOn[txn] = path
                    return .success(false)
                }
                switch outcome {
                case .success(true): c.resume()
                case .success(false): break
                case .failure(let e): c.resume(throwing: e)
                }
            }
        } onCancel: {
            withdraw(txn, from: path)
        }
    }

    /// Takes `txn` out of the queue for `path` if it still waits there, failing its wait with
    /// `CancellationError`.
    private func withdraw(_ txn: UInt64, from path: String) {
        let waiter: CheckedContinuation<Void, Error>? = state.withLock { s in
            guard s.waitingOn[txn] == path, var q = s.queue[path], let i = q.firstIndex(where: { $0.txn == txn }) else { return nil }
            let w = q.remove(at: i)
            s.queue[path] = q.isEmpty ? nil : q
            s.waitingOn[txn] = nil
            return w.continuation
        }
        waiter?.resume(throwing: CancellationError())
    }

    /// Whether `requester` waiting for `path` closes a cycle of waits.
    private static func wouldDeadlock(_ s: State, requester: UInt64, path: String) -> Bool {
        var visited: Set<UInt64> = []
        var frontier = blockers(s, path: path, before: nil)
        while let t = frontier.popLast() {
            if t == requester { return true }
            guard visited.insert(t).inserted, let next = s.waitingOn[t] else { continue }
            frontier += blockers(s, path: next, before: t)
        }
        return false
    }

    /// Who a waiter on `path` waits for: the holder and the waiters queued ahead of `before`.
    private static func blockers(_ s: State, path: String, before txn: UInt64?) -> [UInt64] {
        var out: [UInt64] = s.owner[path].map { [$0] } ?? []
        for w in s.queue[path] ?? [] {
            if w.txn == txn { break }
            out.append(w.txn)
        }
        return out
    }

    /// Releases every lock of `txn` (handing each to its next waiter) and withdraws it from any
    /// queue, failing that wait with `aborted`.
    func releaseAll(_ txn: UInt64) {
        var grants: [CheckedContinuation<Void, Error>] = []
        var aborted: [CheckedContinuation<Void, Error>] = []
        state.withLock { s in
            if let path = s.waitingOn.removeValue(forKey: txn), var q = s.queue[path] {
                aborted += q.filter { $0.txn == txn }.map(\.continuation)
                q.removeAll { $0.txn == txn }
                s.queue[path] = q.isEmpty ? nil : q
            }
            for path in s.held.removeValue(forKey: txn) ?? [] {
                s.owner[path] = nil
                guard var q = s.queue[path], !q.isEmpty else { continue }
                let next = q.removeFirst()
                s.queue[path] = q.isEmpty ? nil : q
                s.owner[path] = next.txn
                s.held[next.txn, default: []].insert(path)
                s.waitingOn[next.txn] = nil
                grants.append(next.continuation)
            }
        }
        for c in grants { c.resume() }
        for c in aborted { c.resume(throwing: HTTPSError(.aborted, "transaction ended while waiting for a lock")) }
    }

    var lockCount: Int { state.withLock { $0.owner.count } }
    var waiterCount: Int { state.withLock { $0.queue.values.reduce(0) { $0 + $1.count } } }
}
