import COpenSSL
import Foundation
import HearthModel

/// The global functions: document access (`get`, `exists`, `getAfter`, `existsAfter`),
/// conversions, `debug`, and the `math`, `duration`, `timestamp`, `latlng` and `hashing` namespaces.
extension Evaluation {

    /// What `string()` makes of a value, and `join()` of each element: bool, int, float, null,
    /// path or string (Firebase's reference); nil for the rest.
    static func text(of value: RulesValue) -> String? {
        switch value {
        case .string(let s): return s
        case .int(let i): return String(i)
        case .float(let d): return String(d)
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        case .path(let p): return "/" + p.joined(separator: "/")
        default: return nil
        }
    }
    func call(_ builtin: Builtin, _ args: [RulesValue], _ expr: Expr) throws(EvalFailure) -> RulesValue {
        if builtin == .debug {
            // Transparent, as on Firebase, even for a value a list query does not fix; what it
            // was goes to the rules' debug log.
            debugLog?("debug(\(args[0].brief))", expr.offset)
            return args[0]
        }
        if let symbolic = args.first(where: Evaluation.containsSymbolic) {
            if case .unknown(let why) = symbolic { return .unknown(why) }
            return .unknown("\(builtin.rawValue)() of a value the query does not fix")
        }
        switch builtin {
        case .get, .getAfter:
            guard let data = try read(args[0], after: builtin == .getAfter, expr) else {
                throw fail("\(builtin.rawValue)(): no document at \(args[0].brief)", expr)
            }
            return data
        case .exists, .existsAfter:
            return .bool(try read(args[0], after: builtin == .existsAfter, expr) != nil)
        case .int:
            switch args[0] {
            case .int: return args[0]
            case .float(let d):
                guard let i = Int64(exactly: d.rounded(.towardZero)) else { throw fail("int(): \(d) is out of range", expr) }
                return .int(i)
            case .string(let s):
                guard let i = Int64(s) else { throw fail("int(): '\(s.prefix(40))' is not an integer", expr) }
                return .int(i)
            default: throw fail("int() cannot convert \(args[0].typeName)", expr)
            }
        case .float:
            switch args[0] {
            case .float: return args[0]
            case .int(let i): return .float(Double(i))
            case .string(let s):
                guard s.utf8.count < 400, let d = Double(s) else { throw fail("float(): '\(s.prefix(40))' is not a number", expr) }
                return .float(d)
            default: throw fail("float() cannot convert \(args[0].typeName)", expr)
            }
        case .string:
            guard let text = Evaluation.text(of: args[0]) else { throw fail("string() cannot convert \(args[0].typeName)", expr) }
            return .string(text)
        case .bool:
            switch args[0] {
            case .bool: return args[0]
            case .string("true"): return .bool(true)
            case .string("false"): return .bool(false)
            default: throw fail("bool() cannot convert \(args[0].brief)", expr)
            }
        case .path:
            guard case .string(let s) = args[0] else { throw fail("path() takes a string", expr) }
            let segments = PathRules.split(s, omittingEmpty: true).map(String.init)
            guard !segments.isEmpty, segments.count <= PathRules.maxSegments + 3 else { throw fail("path(): invalid path '\(s.prefix(60))'", expr) }
            return .path(segments)
        case .mathAbs:
            switch args[0] {
            case .int(let i):
                guard i != Int64.min else { throw fail("math.abs(): integer overflow", expr) }
                return .int(Swift.abs(i))
            case .float(let d): return .float(Swift.abs(d))
            default: throw fail("math.abs() takes a number", expr)
            }
        case .mathCeil, .mathFloor, .mathRound:
            let d: Double
            switch args[0] {
            case .int: return args[0]
            case .float(let x): d = x
            default: throw fail("\(builtin.rawValue)() takes a number", expr)
            }
            let rounded: Double
            switch builtin {
            case .mathCeil: rounded = d.rounded(.up)
            case .mathFloor: rounded = d.rounded(.down)
            default:
                // Half up, as Firebase rounds (math.round(-2.5) == -2); `d - floor` is exact.
                let floor = d.rounded(.down)
                rounded = d - floor >= 0.5 ? floor + 1 : floor
            }
            guard let i = Int64(exactly: rounded) else { throw fail("\(builtin.rawValue)(): \(d) is out of the integer range", expr) }
            return .int(i)
        case .mathSqrt:
            let d = Evaluation.double(args[0])
            guard args[0].typeName == "int" || args[0].typeName == "float" else { throw fail("math.sqrt() takes a number", expr) }
            return .float(d.squareRoot())
        case .mathPow:
            guard ["int", "float"].contains(args[0].typeName), ["int", "float"].contains(args[1].typeName) else {
                throw fail("math.pow() takes numbers", expr)
            }
            return .float(Foundation.pow(Evaluation.double(args[0]), Evaluation.double(args[1])))
        case .mathIsNaN, .mathIsInfinite:
            guard case .float(let d) = args[0] else {
                if case .int = args[0] { return .bool(false) }
                throw fail("\(builtin.rawValue)() takes a number", expr)
            }
            return .bool(builtin == .mathIsNaN ? d.isNaN : d.isInfinite)
        case .durationValue:
            guard case .int(let n) = args[0], case .string(let unit) = args[1] else {
                throw fail("duration.value() takes an integer and a unit ('w', 'd', 'h', 'm', 's', 'ms', 'us', 'ns')", expr)
            }
            let scale: Int64
            switch unit {
            case "w": scale = 604_800_000_000_000
            case "d": scale = 86_400_000_000_000
            case "h": scale = 3_600_000_000_000
            case "m": scale = 60_000_000_000
            case "s": scale = 1_000_000_000
            case "ms": scale = 1_000_000
            case "us": scale = 1_000
            case "ns": scale = 1
            default: throw fail("duration.value(): unknown unit '\(unit)' (w, d, h, m, s, ms, us, ns)", expr)
            }
            let (total, overflow) = n.multipliedReportingOverflow(by: scale)
            if overflow { throw fail("duration.value(): out of range", expr) }
            return .duration(total)
        case .durationTime:
            var total: Int64 = 0
            for (arg, scale) in zip(args, [Int64(3_600_000_000_000), 60_000_000_000, 1_000_000_000, 1]) {
                guard case .int(let n) = arg else { throw fail("duration.time() takes four integers (hours, minutes, seconds, nanos)", expr) }
                let (part, o1) = n.multipliedReportingOverflow(by: scale)
                let (sum, o2) = total.addingReportingOverflow(part)
                if o1 || o2 { throw fail("duration.time(): out of range", expr) }
                total = sum
            }
            return .duration(total)
        case .durationAbs:
            guard case .duration(let n) = args[0], n != Int64.min else { throw fail("duration.abs() takes a duration", expr) }
            return .duration(Swift.abs(n))
        case .timestampDate:
            guard case .int(let y) = args[0], case .int(let m) = args[1], case .int(let d) = args[2],
                  (1...9999).contains(y), (1...12).contains(m), d >= 1, d <= Civil.daysIn(month: m, year: y)
            else {
                throw fail("timestamp.date() takes a valid year (1-9999), month and day", expr)
            }
            return .timestamp(Timestamp(seconds: Civil(year: y, month: m, day: d).daysSinceEpoch * 86_400, nanos: 0))
        case .timestampValue:
            guard case .int(let ms) = args[0] else { throw fail("timestamp.value() takes milliseconds since the epoch", expr) }
            let (s, r) = (ms / 1000, ms % 1000)
            let t = r < 0 ? Timestamp(seconds: s - 1, nanos: Int32(r + 1000) * 1_000_000) : Timestamp(seconds: s, nanos: Int32(r) * 1_000_000)
            guard t.isInFirestoreRange else { throw fail("timestamp.value(): out of range", expr) }
            return .timestamp(t)
        case .latlngValue:
            let lat = Evaluation.double(args[0]), lng = Evaluation.double(args[1])
            guard (-90...90).contains(lat), (-180...180).contains(lng) else { throw fail("latlng.value(): latitude -90…90, longitude -180…180", expr) }
            return .latlng(GeoPoint(latitude: lat, longitude: lng))
        case .hashingCRC32, .hashingCRC32C, .hashingMD5, .hashingSHA256:
            // https://firebase.google.com/docs/reference/rules/rules.hashing: bytes, or a
            // string's UTF-8; the hash as bytes (a CRC as its four bytes, least significant first).
            let input: [UInt8]
            switch args[0] {
            case .bytes(let b): input = b
            case .string(let s): input = Array(s.utf8)
            default: throw fail("\(builtin.rawValue)() takes bytes or a string, not \(args[0].typeName)", expr)
            }
            switch builtin {
            case .hashingCRC32: return .bytes(Hashing.crcBytes(Hashing.crc32(input, table: Hashing.crc32Table)))
            case .hashingCRC32C: return .bytes(Hashing.crcBytes(Hashing.crc32(input, table: Hashing.crc32cTable)))
            default:
                guard let digest = Hashing.digest(input, builtin == .hashingMD5 ? EVP_md5() : EVP_sha256()) else {
                    throw fail("\(builtin.rawValue)(): this system's OpenSSL cannot compute it", expr)
                }
                return .bytes(digest)
            }
        case .debug:
            return args[0]  // handled above
        }
    }

    /// A document read for `get()` and its kin: the path must name a document of this database.
    /// Returns the resource value (`data`, `id`, `__name__`), nil when there is no document.
    func read(_ target: RulesValue, after: Bool, _ expr: Expr) throws(EvalFailure) -> RulesValue? {
        let segments: [String]
        switch target {
        case .path(let s): segments = s
        case .string(let s): segments = PathRules.split(s, omittingEmpty: true).map(String.init)
        default: throw fail("expected a document path such as /databases/$(database)/documents/…, got \(target.typeName)", expr)
        }
        let prefix = RulesValue.documentsPrefix(database)
        guard segments.count > prefix.count, segments.starts(with: prefix) else {
            throw fail("\(target.brief) is not a document of this database (/databases/\(database)/documents/…)", expr)
        }
        let path: DocumentPath
        do { path = try DocumentPath(segments.dropFirst(prefix.count).joined(separator: "/")) } catch {
            throw fail("\(target.brief) is not a document path: \(error.message)", expr)
        }
        let data: [String: Value]?
        do { data = try access.document(path, after: after, own: own) } catch {
            switch error {
            case .limit(let n):
                throw EvalFailure(kind: .abort, message: "more than \(n) documents read with get()/exists() (Firebase's limit for this request)", offset: expr.offset)
            case .reader(let message):
                throw EvalFailure(kind: .abort, message: message, offset: expr.offset)
            }
        }
        guard let data else { return nil }
        return Evaluation.resourceValue(path, data, database: database)
    }

    /// What `resource`, `request.resource` and `get()` return for a document.
    static func resourceValue(_ path: DocumentPath, _ data: [String: Value], database: String) -> RulesValue {
        .map([
            "data": .map(data, database: database),
            "id": .string(path.id),
            "__name__": .path(RulesValue.documentsPrefix(database) + path.segments),
        ])
    }
}
