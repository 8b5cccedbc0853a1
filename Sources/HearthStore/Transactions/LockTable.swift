import HearthModel
import Synchronization

/// Exclusive per-document locks for transactions, as Firestore's server SDKs take them: a
/// transaction locks each document it reads and holds the locks until it commits or rolls back, so
/// two transactions incrementing one counter run one after the other instead of failing.
///
/// Waiters are served first come, first served. Before a transaction starts waiting, the table
/// follows who waits for whom from the lock's holder and the waiters ahead; if that leads back to
/// the requester, waiting would deadlock, and the requester is aborted instead (its caller retries
/// after releasing its own locks). A transaction usually waits for one lock at a time, but a unit
/// may read several documents of one transaction concurrently, so waits are kept as a set per
/// transaction and the search visits each transaction once.
final class LockTable: Sendable {
    private struct Waiter {
        let txn: UInt64
        let continuation: CheckedContinuation<Void, Error>
    }

    private struct State {
        var owner: [String: UInt64] = [:]
        var queue: [String: [Waiter]] = [:]
        var waitingOn: [UInt64: Set<String>] = [:]
        var held: [UInt64: Set<String>] = [:]

        /// Takes `txn`'s wait for `path` out of the queue, returning its continuation.
        mutating func removeWaiter(_ txn: UInt64, from path: String) -> CheckedContinuation<Void, Error>? {
            guard var q = queue[path], let i = q.firstIndex(where: { $0.txn == txn }) else { return nil }
            let waiter = q.remove(at: i)
            queue[path] = q.isEmpty ? nil : q
            stopWaiting(txn, for: path)
            return waiter.continuation
        }

        mutating func stopWaiting(_ txn: UInt64, for path: String) {
            waitingOn[txn]?.remove(path)
            if waitingOn[txn]?.isEmpty == true { waitingOn[txn] = nil }
        }
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
                    s.waitingOn[txn, default: []].insert(path)
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

    /// Takes `txn`'s wait for `path` out of the queue if it is still there, failing it with
    /// `CancellationError`.
    private func withdraw(_ txn: UInt64, from path: String) {
        state.withLock { $0.removeWaiter(txn, from: path) }?.resume(throwing: CancellationError())
    }

    /// Whether `requester` waiting for `path` closes a cycle of waits.
    private static func wouldDeadlock(_ s: State, requester: UInt64, path: String) -> Bool {
        var visited: Set<UInt64> = []
        var frontier = blockers(s, path: path, before: nil)
        while let t = frontier.popLast() {
            if t == requester { return true }
            guard visited.insert(t).inserted else { continue }
            for next in s.waitingOn[t] ?? [] { frontier += blockers(s, path: next, before: t) }
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

    /// Releases every lock of `txn` (handing each to its next waiter) and withdraws it from every
    /// queue it waits in, failing those waits with `aborted`.
    func releaseAll(_ txn: UInt64) {
        var grants: [CheckedContinuation<Void, Error>] = []
        var aborted: [CheckedContinuation<Void, Error>] = []
        state.withLock { s in
            for path in s.waitingOn[txn] ?? [] {
                if let c = s.removeWaiter(txn, from: path) { aborted.append(c) }
            }
            s.waitingOn[txn] = nil
            for path in s.held.removeValue(forKey: txn) ?? [] {
                s.owner[path] = nil
                guard var q = s.queue[path], !q.isEmpty else { continue }
                let next = q.removeFirst()
                s.queue[path] = q.isEmpty ? nil : q
                s.owner[path] = next.txn
                s.held[next.txn, default: []].insert(path)
                s.stopWaiting(next.txn, for: path)
                grants.append(next.continuation)
            }
        }
        for c in grants { c.resume() }
        for c in aborted { c.resume(throwing: HTTPSError(.aborted, "transaction ended while waiting for a lock")) }
    }

    var lockCount: Int { state.withLock { $0.owner.count } }
    var waiterCount: Int { state.withLock { $0.queue.values.reduce(0) { $0 + $1.count } } }
}
