#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One machine word per thread, zero on a thread that never set it: a pthread key, as Swift has
/// no thread-local storage of its own. Each value made takes a key for the life of the process,
/// so it is meant for `static let`s (`SendBatch`'s depth, the store's `CommitPlacement`).
public struct ThreadLocalWord: Sendable {
    private let key: pthread_key_t

    public init() {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        self.key = key
    }

    /// The calling thread's value.
    public var value: Int {
        get { Int(bitPattern: pthread_getspecific(key)) }
        nonmutating set { pthread_setspecific(key, UnsafeRawPointer(bitPattern: newValue)) }
    }
}
