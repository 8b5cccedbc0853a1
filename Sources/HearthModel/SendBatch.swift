#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
    /// How deep in nested `run`s the calling thread is (a pthread key: Swift has no thread-local
    /// storage of its own). The value is the depth itself, stored as a pointer's bits.
    private static let depthKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Sends what the calling thread held back (set once by the frames' owner).
    private static let flushSlot = ClosureSlot<@Sendable () -> Void>()

    /// Sets what ends a batch: it sends everything the calling thread held back.
    public static func setFlush(_ flush: @escaping @Sendable () -> Void) { flushSlot.set(flush) }

    private static var depth: Int { Int(bitPattern: pthread_getspecific(depthKey)) }

    private static func setDepth(_ value: Int) { pthread_setspecific(depthKey, UnsafeRawPointer(bitPattern: value)) }

    /// Whether the calling thread is inside `run` (and frames may be held back).
    public static var isActive: Bool { depth > 0 && flushSlot.value != nil }

    /// Runs `body`; frames it sends from this thread go out when the outermost `run` returns (or
    /// throws), one write per socket.
    @discardableResult
    public static func run<T>(_ body: () throws -> T) rethrows -> T {
        let outer = depth
        setDepth(outer + 1)
        defer {
            setDepth(outer)
            if outer == 0 { flushSlot.value?() }
        }
        return try body()
    }
}
