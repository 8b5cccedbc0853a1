#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Where every part of Hearth gets random numbers (retry jitter, auto ids, task ids, transaction
/// ids, invocation seeds), as `Clock` is where it gets the time: `SystemRandom` in production,
/// `SeededRandom` in tests and replay, so the same seed gives the same ids and backoffs.
public protocol RandomSource: Sendable {
    /// 64 uniformly random bits.
    func next() -> UInt64
    /// A seed for an invocation's own generator (128 bits).
    func seed() -> RandomSeed
}

extension RandomSource {
    /// A uniform double in [0, 1).
    public func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// A 20-character auto id (Firestore's shape).
    public func autoID() -> String { autoID(length: AutoID.length) }

    /// An id of `length` characters from [A-Za-z0-9].
    public func autoID(length: Int) -> String {
        var generator = RandomSourceGenerator(source: self)
        return AutoID.make(length: length, using: &generator)
    }

    public func seed() -> RandomSeed { RandomSeed(high: next(), low: next()) }

    /// `count` random bytes.
    public func bytes(_ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count + 8)
        while out.count < count { withUnsafeBytes(of: next()) { out.append(contentsOf: $0) } }
        return Array(out.prefix(count))
    }
}

/// Adapts a `RandomSource` to the standard library's generator protocol.
public struct RandomSourceGenerator: RandomNumberGenerator {
    let source: any RandomSource
    public init(source: any RandomSource) { self.source = source }
    public mutating func next() -> UInt64 { source.next() }
}

/// The operating system's generator (`getrandom`), read 512 bytes at a time: the only place Hearth
/// takes randomness from the system.
public final class SystemRandom: RandomSource {
    private struct Pool {
        var words = [UInt64](repeating: 0, count: 64)
        var used = 64

        mutating func take() -> UInt64 {
            if used == words.count {
                words.withUnsafeMutableBytes { arc4random_buf($0.baseAddress!, $0.count) }
                used = 0
            }
            defer { used += 1 }
            return words[used]
        }
    }

    private let pool = Mutex(Pool())

    public init() {}

    public func next() -> UInt64 { pool.withLock { $0.take() } }

    public func seed() -> RandomSeed { pool.withLock { RandomSeed(high: $0.take(), low: $0.take()) } }
}

/// A deterministic source for tests and replay: the same seed gives the same numbers.
public final class SeededRandom: RandomSource {
    private let generator: Mutex<Xoshiro256>

    public init(seed: UInt64) { generator = Mutex(Xoshiro256(seed: RandomSeed(high: seed, low: ~seed))) }

    public func next() -> UInt64 { generator.withLock { $0.next() } }
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, fast, seedable generator, used to expand seeds and
/// by randomized tests and benchmark corpora, which replay exactly from their seed.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    public var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// xoshiro256** (Blackman and Vigna, 2018): 256 bits of state, seeded from 128 bits through
/// SplitMix64 as its authors recommend. An invocation's generator: its auto ids come from it.
public struct Xoshiro256: RandomNumberGenerator, Sendable {
    var s: (UInt64, UInt64, UInt64, UInt64)

    public init(seed: RandomSeed) {
        var mix = SplitMix64(seed: seed.high)
        var mix2 = SplitMix64(seed: seed.low)
        s = (mix.next(), mix2.next(), mix.next(), mix2.next())
        if s == (0, 0, 0, 0) { s.0 = 1 }  // the one state it must not start from
    }

    @inline(__always) static func rotl(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }

    public mutating func next() -> UInt64 {
        let result = Xoshiro256.rotl(s.1 &* 5, 7) &* 9
        let t = s.1 << 17
        s.2 ^= s.0
        s.3 ^= s.1
        s.1 ^= s.2
        s.0 ^= s.3
        s.2 ^= t
        s.3 = Xoshiro256.rotl(s.3, 45)
        return result
    }
}
