import Foundation

/// A point in time with nanosecond resolution, counted from the Unix epoch. Firestore's timestamp.
public struct Timestamp: Sendable, Hashable, Comparable, Codable {
    /// Whole seconds since 1970-01-01T00:00:00Z (negative before it).
    public var seconds: Int64
    /// Nanoseconds within the second, 0...999_999_999.
    public var nanos: Int32

    public static let zero = Timestamp(seconds: 0, nanos: 0)

    enum CodingKeys: String, CodingKey { case seconds, nanos }

    /// Decoded through the normalizing initializer, so nanos are always within the second.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(seconds: try c.decode(Int64.self, forKey: .seconds), nanos: try c.decode(Int32.self, forKey: .nanos))
    }
    /// The range Firestore accepts: 0001-01-01T00:00:00Z ..< 10000-01-01T00:00:00Z.
    public static let minSeconds: Int64 = -62_135_596_800
    public static let maxSeconds: Int64 = 253_402_300_799

    public init(seconds: Int64, nanos: Int32 = 0) {
        var seconds = seconds
        var nanos = nanos
        if nanos < 0 || nanos >= 1_000_000_000 {
            // Floor division: -1_000_000_000 ns carries exactly -1 s, not -2 s.
            let (quotient, remainder) = Int64(nanos).quotientAndRemainder(dividingBy: 1_000_000_000)
            let carry = remainder < 0 ? quotient - 1 : quotient
            seconds = seconds.saturatingAdd(carry)
            nanos = Int32(Int64(nanos) - carry * 1_000_000_000)
        }
        self.seconds = seconds
        self.nanos = nanos
    }

    public init(date: Date) {
        let interval = date.timeIntervalSince1970
        guard interval.isFinite, abs(interval) < 9e18 else {
            self = interval < 0 ? .distantPast : .distantFuture
            return
        }
        let whole = interval.rounded(.down)
        let nanos = ((interval - whole) * 1e9).rounded()
        self.init(seconds: Int64(whole), nanos: Int32(min(nanos, 999_999_999)))
    }

    /// Time in microseconds since the epoch (Firestore's stored precision).
    public init(microseconds: Int64) {
        let (q, r) = microseconds.quotientAndRemainder(dividingBy: 1_000_000)
        self.init(seconds: q, nanos: Int32(r * 1000))
    }

    public init(nanosecondsSinceEpoch value: Int64) {
        let (q, r) = value.quotientAndRemainder(dividingBy: 1_000_000_000)
        self.init(seconds: q, nanos: Int32(r))
    }

    public var date: Date {
        Date(timeIntervalSince1970: Double(seconds) + Double(nanos) / 1e9)
    }

    /// Nanoseconds since the epoch, clamped to `Int64`'s range (about ±292 years from 1970).
    public var nanosecondsSinceEpoch: Int64 { Timestamp.scaled(seconds, by: 1_000_000_000, plus: Int64(nanos)) }

    /// Microseconds since the epoch, clamped to `Int64`'s range (about ±292,000 years from 1970).
    public var microsecondsSinceEpoch: Int64 { Timestamp.scaled(seconds, by: 1_000_000, plus: Int64(nanos) / 1000) }

    /// `value * factor + extra`, saturating at `Int64`'s bounds instead of trapping.
    static func scaled(_ value: Int64, by factor: Int64, plus extra: Int64) -> Int64 {
        let (product, overflow) = value.multipliedReportingOverflow(by: factor)
        if overflow { return value < 0 ? Int64.min : Int64.max }
        return product.saturatingAdd(extra)
    }

    /// Seconds since the epoch as a double.
    public var secondsSinceEpoch: Double { Double(seconds) + Double(nanos) / 1e9 }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.seconds != rhs.seconds ? lhs.seconds < rhs.seconds : lhs.nanos < rhs.nanos
    }

    /// The latest and earliest instants a `Timestamp` holds; arithmetic saturates at them.
    public static let distantFuture = Timestamp(seconds: Int64.max, nanos: 999_999_999)
    public static let distantPast = Timestamp(seconds: Int64.min, nanos: 0)

    /// This time moved by `duration`, saturating at `distantFuture`/`distantPast` (never trapping,
    /// whatever a token, a request or a unit says).
    public func advanced(by duration: Duration) -> Timestamp {
        // Past 2^63 seconds either way, every instant a Timestamp holds is passed.
        if duration.attoseconds > Duration.componentsLimit { return .distantFuture }
        if duration.attoseconds < -Duration.componentsLimit { return .distantPast }
        let (s, attos) = duration.components
        return moved(seconds: s, nanos: attos / 1_000_000_000)
    }

    /// This time moved by whole seconds and nanoseconds (|nanos| < 10^9), saturating.
    private func moved(seconds delta: Int64, nanos nanoDelta: Int64) -> Timestamp {
        let (sum, overflow) = seconds.addingReportingOverflow(delta)
        if overflow { return delta < 0 ? .distantPast : .distantFuture }
        var nanos = Int64(self.nanos) + nanoDelta
        var whole = sum
        if nanos >= 1_000_000_000 {
            nanos -= 1_000_000_000
            guard whole < Int64.max else { return .distantFuture }
            whole += 1
        } else if nanos < 0 {
            nanos += 1_000_000_000
            guard whole > Int64.min else { return .distantPast }
            whole -= 1
        }
        return Timestamp(seconds: whole, nanos: Int32(nanos))
    }

    public static func + (lhs: Timestamp, rhs: Duration) -> Timestamp { lhs.advanced(by: rhs) }

    public static func - (lhs: Timestamp, rhs: Duration) -> Timestamp {
        if rhs.attoseconds > Duration.componentsLimit { return .distantPast }
        if rhs.attoseconds < -Duration.componentsLimit { return .distantFuture }
        let (s, attos) = rhs.components
        let (negated, overflow) = Int64(0).subtractingReportingOverflow(s)
        if overflow { return .distantFuture }  // minus the most negative duration
        return lhs.moved(seconds: negated, nanos: -(attos / 1_000_000_000))
    }

    /// The duration from `rhs` to this time, saturating at about ±2^63 seconds.
    public static func - (lhs: Timestamp, rhs: Timestamp) -> Duration {
        let (difference, overflow) = lhs.seconds.subtractingReportingOverflow(rhs.seconds)
        if overflow { return .seconds(lhs.seconds < rhs.seconds ? Int64.min : Int64.max) }
        return .seconds(difference) + .nanoseconds(Int64(lhs.nanos) - Int64(rhs.nanos))
    }

    public var isInFirestoreRange: Bool { seconds >= Timestamp.minSeconds && seconds <= Timestamp.maxSeconds }
}

extension Duration {
    /// The duration in seconds as a double. From the two components when they exist: the
    /// conversion of the whole `Int128` count of attoseconds is generic in the standard library
    /// and cost ~1.5% of the host's CPU per invocation (one for the latency metric of each call).
    public var secondsDouble: Double {
        let attos = attoseconds
        guard attos <= Duration.componentsLimit, attos >= -Duration.componentsLimit else { return Double(attos) / 1e18 }
        let (seconds, fraction) = components
        return Double(seconds) + Double(fraction) / 1e18
    }

    /// Past this the standard library's `components` traps: beyond `Int64` seconds either way,
    /// which a `Duration` can hold (and decode from JSON).
    static let componentsLimit = Int128(Int64.max) * 1_000_000_000_000_000_000

    /// Builds a duration from a number of seconds that may have a fraction, to the nanosecond.
    /// Total: values beyond `Int64` seconds (about 292 billion years) clamp to the largest duration
    /// of their sign, and NaN is zero. Check ranges where a value enters (requests, options,
    /// configuration) and say what is allowed; this conversion only never traps.
    public static func seconds(double value: Double) -> Duration {
        guard !value.isNaN else { return .zero }
        guard value < 9_223_372_036_854_775_807.0 else { return .seconds(Int64.max) }
        guard value > -9_223_372_036_854_775_808.0 else { return .seconds(Int64.min) }
        let whole = value.rounded(.towardZero)
        return .seconds(Int64(whole)) + .nanoseconds(Int64(((value - whole) * 1e9).rounded()))
    }
}

extension Int64 {
    /// `self + other`, clamped to `Int64`'s bounds.
    public func saturatingAdd(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other < 0 ? Int64.min : Int64.max) : sum
    }
}

// MARK: RFC 3339

extension Timestamp {
    /// RFC 3339 in UTC with as many fractional digits as needed (none, 3, 6 or 9), like Firestore's REST API.
    public var rfc3339: String {
        let (y, mo, d, h, mi, s) = Timestamp.civil(seconds)
        var out = ""
        out.reserveCapacity(30)
        Timestamp.appendPadded(&out, y, 4)
        out += "-"; Timestamp.appendPadded(&out, mo, 2)
        out += "-"; Timestamp.appendPadded(&out, d, 2)
        out += "T"; Timestamp.appendPadded(&out, h, 2)
        out += ":"; Timestamp.appendPadded(&out, mi, 2)
        out += ":"; Timestamp.appendPadded(&out, s, 2)
        if nanos != 0 {
            out += "."
            if nanos % 1_000_000 == 0 {
                Timestamp.appendPadded(&out, Int(nanos / 1_000_000), 3)
            } else if nanos % 1000 == 0 {
                Timestamp.appendPadded(&out, Int(nanos / 1000), 6)
            } else {
                Timestamp.appendPadded(&out, Int(nanos), 9)
            }
        }
        out += "Z"
        return out
    }

    /// Parses RFC 3339 (`2024-05-01T09:00:00Z`, `2024-05-01T09:00:00.123+09:00`); nil when malformed.
    public init?(rfc3339 text: String) {
        let b = Array(text.utf8)
        func digits(_ at: Int, _ n: Int) -> Int? {
            guard at + n <= b.count else { return nil }
            var v = 0
            for i in at..<(at + n) {
                let c = b[i]
                guard c >= 48 && c <= 57 else { return nil }
                v = v * 10 + Int(c - 48)
            }
            return v
        }
        guard b.count >= 20,
              let y = digits(0, 4), b[4] == 45, let mo = digits(5, 2), b[7] == 45, let d = digits(8, 2),
              b[10] == 84 || b[10] == 116 || b[10] == 32,
              let h = digits(11, 2), b[13] == 58, let mi = digits(14, 2), b[16] == 58, let s = digits(17, 2)
        else { return nil }
        guard (1...12).contains(mo), d >= 1, d <= Timestamp.daysInMonth(y, mo), h < 24, mi < 60, s < 61 else { return nil }
        var i = 19
        var nanos = 0
        if i < b.count && b[i] == 46 {
            i += 1
            var count = 0
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                if count < 9 { nanos = nanos * 10 + Int(b[i] - 48) }
                count += 1
                i += 1
            }
            guard count > 0 else { return nil }
            // Digits past the ninth are read and dropped (truncated to nanoseconds).
            if count < 9 { for _ in count..<9 { nanos *= 10 } }
        }
        guard i < b.count else { return nil }
        var offset = 0
        if b[i] == 90 || b[i] == 122 {
            i += 1
        } else if b[i] == 43 || b[i] == 45 {
            guard let oh = digits(i + 1, 2), b.count > i + 3, b[i + 3] == 58, let om = digits(i + 4, 2), oh < 24, om < 60 else { return nil }
            offset = (oh * 60 + om) * 60 * (b[i] == 45 ? -1 : 1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let days = Timestamp.daysFromCivil(y, mo, d)
        let secs = Int64(days) * 86400 + Int64(h * 3600 + mi * 60 + min(s, 59)) - Int64(offset)
        self.init(seconds: secs, nanos: Int32(nanos))
    }

    static func appendPadded(_ out: inout String, _ value: Int, _ width: Int) {
        let s = String(value)
        if s.count < width { out += String(repeating: "0", count: width - s.count) }
        out += s
    }

    static func isLeap(_ y: Int) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }

    static func daysInMonth(_ y: Int, _ m: Int) -> Int {
        switch m {
        case 2: return isLeap(y) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    /// The civil date and time in UTC of a count of seconds since the epoch.
    static func civil(_ seconds: Int64) -> (Int, Int, Int, Int, Int, Int) {
        var days = Int(seconds / 86400)
        var rem = Int(seconds % 86400)
        if rem < 0 { rem += 86400; days -= 1 }
        let z = days + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        return (y, m, d, rem / 3600, rem % 3600 / 60, rem % 60)
    }
}

extension Timestamp: CustomStringConvertible {
    public var description: String { rfc3339 }
}
