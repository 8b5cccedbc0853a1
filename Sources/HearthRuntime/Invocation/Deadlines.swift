import HearthModel
import Synchronization

/// Timeouts for many concurrent operations with one sleeping timer instead of one per operation.
///
/// `schedule(at:_:)` records an action; `cancel(_:)` forgets it (the operation finished first). A
/// single driver task sleeps on the clock until the earliest deadline, runs what is due, and sleeps
/// again until the next. Invocations finish in microseconds and their timeouts are seconds away, so
/// almost every `schedule` lands after the armed deadline and costs a heap insert under a lock; the
/// driver is re-armed only when a deadline earlier than the armed one arrives.
///
/// On a real clock the driver keeps sleeping toward its armed deadline when every action has been
/// cancelled (waking once to find nothing due is cheaper than re-arming for each invocation). On a
/// virtual clock it stops at once, so tests see only the sleepers of work that is really pending.
final class Deadlines: Sendable {
    typealias Action = @Sendable () -> Void

    private struct Entry {
        let deadline: Timestamp
        let id: UInt64
    }

    /// An action as the table holds it: a closure stored straight in a dictionary is converted to
    /// the dictionary's generic representation, which allocates a thunk for every `schedule`; in a
    /// struct's field it is stored as it is.
    private struct Scheduled {
        let action: Action
    }

    private struct State {
        var heap: [Entry] = []
        var actions: [UInt64: Scheduled] = [:]
        var nextID: UInt64 = 1
        /// Heap entries whose action was cancelled (removed lazily, or all at once when they pile up).
        var stale = 0
        var driver: Task<Void, Never>?
        var armedFor: Timestamp?
    }

    private let clock: any Clock
    private let lingersWhenIdle: Bool
    private let state = Mutex(State())

    init(clock: any Clock) {
        self.clock = clock
        lingersWhenIdle = clock is SystemClock
    }

    /// Runs `action` at `deadline` unless cancelled first. Returns the token for `cancel`.
    func schedule(at deadline: Timestamp, _ action: @escaping Action) -> UInt64 {
        state.withLock { s in
            let id = s.nextID
            s.nextID += 1
            s.actions[id] = Scheduled(action: action)
            Self.push(&s.heap, Entry(deadline: deadline, id: id))
            if s.armedFor.map({ deadline < $0 }) ?? true { arm(&s, for: deadline) }
            return id
        }
    }

    /// Forgets an action that has not run yet; nothing happens if it already ran.
    func cancel(_ id: UInt64) {
        let stopped = state.withLock { s -> Task<Void, Never>? in
            guard s.actions.removeValue(forKey: id) != nil else { return nil }
            s.stale += 1
            if s.stale > 1024 && s.stale > s.actions.count {
                // A sorted array is a valid min-heap.
                let actions = s.actions
                s.heap = s.heap.filter { actions[$0.id] != nil }.sorted { $0.deadline < $1.deadline }
                s.stale = 0
            }
            guard s.actions.isEmpty, !lingersWhenIdle else { return nil }
            s.heap.removeAll(keepingCapacity: true)
            s.stale = 0
            s.armedFor = nil
            defer { s.driver = nil }
            return s.driver
        }
        stopped?.cancel()
    }

    /// How many actions are waiting (for tests and metrics).
    var pendingCount: Int { state.withLock { $0.actions.count } }

    /// Heap entries, cancelled ones included (for tests).
    var heapCount: Int { state.withLock { $0.heap.count } }

    private func arm(_ s: inout State, for deadline: Timestamp) {
        s.driver?.cancel()
        s.armedFor = deadline
        let clock = self.clock
        s.driver = Task { [weak self] in
            var next = deadline
            while true {
                do { try await clock.sleep(until: next) } catch { return }  // re-armed or stopped
                guard let self, let following = self.fire(armedFor: next) else { return }
                next = following
            }
        }
    }

    /// Runs every due action; returns the next deadline to sleep toward, or nil to stop. Only the
    /// driver armed for `armedFor` proceeds (one replaced meanwhile just stops).
    private func fire(armedFor: Timestamp) -> Timestamp? {
        let now = clock.now()
        let (due, next) = state.withLock { s -> ([Action], Timestamp?) in
            guard s.armedFor == armedFor else { return ([], nil) }
            var due: [Action] = []
            while let top = s.heap.first, top.deadline <= now {
                Self.pop(&s.heap)
                if let scheduled = s.actions.removeValue(forKey: top.id) { due.append(scheduled.action) } else { s.stale -= 1 }
            }
            // Skip entries already cancelled, so the driver does not wake for nothing.
            while let top = s.heap.first, s.actions[top.id] == nil {
                Self.pop(&s.heap)
                s.stale -= 1
            }
            s.armedFor = s.heap.first?.deadline
            if s.armedFor == nil { s.driver = nil }
            return (due, s.armedFor)
        }
        for action in due { action() }
        return next
    }

    private static func push(_ heap: inout [Entry], _ entry: Entry) { heap.heapPush(entry, by: earlier) }

    private static func pop(_ heap: inout [Entry]) { heap.heapRemoveTop(by: earlier) }

    /// The heap's order: the earliest deadline on top.
    private static func earlier(_ a: Entry, _ b: Entry) -> Bool { a.deadline < b.deadline }
}
