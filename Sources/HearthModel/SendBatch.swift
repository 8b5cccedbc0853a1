/// A stretch of work on one thread whose frames to other processes go out together at its end:
/// the store's writer answering a group's commits, the delivery engine starting a batch of
/// deliveries. Inside `run`, a frame socket keeps what this thread sends in its outbox (as a
/// socket's reader and the HTTP server's polling threads do), and when the outermost `run` ends
/// each socket written to sends everything in one write, which wakes the process on the other side
/// once instead of once per frame.
///
/// The frames' owner (HearthRuntime's frame sockets) sets `flush` before its first use; until then
/// nothing is held back (`isActive` is false), so no frame can wait for a flush that never comes.
public enum SendBatch {
    /// How deep in nested `run`s the calling thread is.
    private static let depth = ThreadLocalWord()

    /// Sends what the calling thread held back (set once by the frames' owner).
    private static let flushSlot = ClosureSlot<@Sendable () -> Void>()

    /// Sets what ends a batch: it sends everything the calling thread held back.
    public static func setFlush(_ flush: @escaping @Sendable () -> Void) { flushSlot.set(flush) }

    /// Whether the calling thread is inside `run` (and frames may be held back).
    public static var isActive: Bool { depth.value > 0 && flushSlot.isSet.load(ordering: .acquiring) }

    /// Runs `body`; frames it sends from this thread go out when the outermost `run` returns (or
    /// throws), one write per socket.
    @discardableResult
    public static func run<T>(_ body: () throws -> T) rethrows -> T {
        let outer = depth.value
        depth.value = outer + 1
        defer {
            depth.value = outer
            if outer == 0 { flushSlot.value?() }
        }
        return try body()
    }
}
