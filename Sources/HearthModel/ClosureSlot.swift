import Synchronization

/// A closure set after its owner is made (a replay's seed planner, a worker's kill switch) and
/// read from any thread.
///
/// Why not `Mutex<F?>`: with Swift 6.3, a closure kept directly as a `Mutex`'s optional value comes
/// back from `withLock { $0 }` wrapped in a new reabstraction thunk each time, and the thunk is
/// written back, so every read adds one more thunk to every later call: CPU and memory grow with
/// the number of reads (measured: a closure read 9,000 times cost 59 µs a call, against 16 ns).
/// Held inside a struct, the closure is handed out as it was stored (`ClosureSlotTests`).
///
/// Inlinable, so that a caller in another module gets it specialized for its `F`: unspecialized,
/// every read of an empty slot (the invoker's planner, per call) looked up generic metadata.
public final class ClosureSlot<F: Sendable>: Sendable {
    @usableFromInline struct Held: Sendable {
        @usableFromInline let value: F
        @inlinable init(value: F) { self.value = value }
    }
    @usableFromInline let held = Mutex<Held?>(nil)
    /// Whether a closure is set: read without the lock, so the common empty slot (every invocation
    /// outside a replay asks the planner) costs one atomic load and no contended lock.
    @usableFromInline let isSet = Atomic<Bool>(false)

    public init() {}

    /// The closure last set, or nil.
    @inlinable public var value: F? {
        guard isSet.load(ordering: .acquiring) else { return nil }
        return held.withLock { $0 }?.value
    }

    @inlinable public func set(_ value: F?) {
        held.withLock { held in
            held = value.map(Held.init)
            isSet.store(value != nil, ordering: .releasing)
        }
    }
}
