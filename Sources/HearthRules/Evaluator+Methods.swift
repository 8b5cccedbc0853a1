import Foundation
import HearthModel

/// Methods of the rules' types (https://firebase.google.com/docs/reference/rules/rules):
/// maps, map diffs, lists, sets, strings, bytes, timestamps, durations, latlngs and vectors.
extension Evaluation {
    static let maxStringScalars = 1_000_000

    func method(_ receiver: RulesValue, _ name: String, _ args: [RulesValue], _ expr: Expr) throws(EvalFailure) -> RulesValue {
        switch receiver {
        case .field(let p):
            // m.get(key, default) on a field the query guarantees exists is that field.
            if name == "get", args.count == 2, case .string(let key) = args[0], !args[1].isSymbolic,
               let facts, facts.fields[p.appending(key)] != nil {
                return try member(receiver, key, expr)
            }
            // list.hasAny([...]) on an array field the query's array-contains filters pin down.
            if name == "hasAny", args.count == 1, let facts, case .list(let items) = args[0] {
                let values = items.compactMap { $0.firestoreValue(database: database) }
                if values.count == items.count { return Evaluation.value(facts.hasAny(p, values)) }
            }
            return .unknown("resource.data\(p.segments.isEmpty ? "" : ".\(p)").\(name)() for documents the query does not fix")
        case .unknown(let why):
            return .unknown(why)
        default:
            break
        }
        if facts != nil, Evaluation.containsSymbolic(receiver) || args.contains(where: Evaluation.containsSymbolic) {
            return .unknown(".\(name)() on a value the query does not fix")
        }
        switch receiver {
        case .map(let m): return try mapMethod(m, name, args, expr)
        case .mapDiff(let d): return try diffMethod(d, name, args, expr)
        case .list(let items): return try listMethod(items, name, args, expr)
        case .set(let items): return try setMethod(items, name, args, expr)
        case .string(let s): return try stringMethod(s, name, args, expr)
        case .bytes(let b):
            try arity(args, 0, name, expr)
            switch name {
            case "size": return .int(Int64(b.count))
            // base64url, as the reference says (b'\xFB\xEF\xBE'.toBase64() == '----'), padded.
            case "toBase64": return .string(Base64.encode(b, urlSafe: true, padding: true))
            // Upper-case digits, as in the reference (b'\x2A'.toHexString() == '2A').
            case "toHexString": return .string(Hex.encode(b, uppercase: true))
            default: break
            }
        case .timestamp(let t): return try timestampMethod(t, name, args, expr)
        case .duration(let n):
            try arity(args, 0, name, expr)
            switch name {
            case "seconds": return .int(n / 1_000_000_000)
            case "nanos": return .int(n % 1_000_000_000)
            default: break
            }
        case .latlng(let g):
            switch name {
            case "latitude": try arity(args, 0, name, expr); return .float(g.latitude)
            case "longitude": try arity(args, 0, name, expr); return .float(g.longitude)
            case "distance":
                try arity(args, 1, name, expr)
                guard case .latlng(let other) = args[0] else { throw fail("distance() takes a latlng", expr) }
                return .float(Evaluation.distance(g, other))
            default: break
            }
        case .path(let segments):
            if name == "size" { try arity(args, 0, name, expr); return .int(Int64(segments.count)) }
        case .vector(let components):
            try arity(args, 0, name, expr)
            switch name {
            case "size": return .int(Int64(components.count))
            case "toList": return .list(components.map(RulesValue.float))
            default: break
            }
        default:
            break
        }
        throw fail("\(receiver.typeName) has no method \(name)()", expr)
    }

    func arity(_ args: [RulesValue], _ count: Int, _ name: String, _ expr: Expr) throws(EvalFailure) {
        guard args.count == count else { throw fail("\(name)() takes \(count) argument\(count == 1 ? "" : "s"), not \(args.count)", expr) }
    }

    static func strings(_ keys: [String]) -> [RulesValue] { keys.map { .string($0) } }

    private func mapMethod(_ m: [String: RulesValue], _ name: String, _ args: [RulesValue], _ expr: Expr) throws(EvalFailure) -> RulesValue {
        switch name {
        case "keys":
            try arity(args, 0, name, expr)
            return .list(Evaluation.strings(m.keys.sorted()))
        case "values":
            try arity(args, 0, name, expr)
            return .list(m.keys.sorted().compactMap { m[$0] })
        case "size":
            try arity(args, 0, name, expr)
            return .int(Int64(m.count))
        case "get":
            try arity(args, 2, name, expr)
            // A key, or a list of keys naming a nested field.
            var keys: [String] = []
            switch args[0] {
            case .string(let k): keys = [k]
            case .list(let items):
                for item in items {
                    guard case .string(let k) = item else { throw fail("get() takes a key or a list of string keys", expr) }
                    keys.append(k)
                }
            default: throw fail("get() takes a key or a list of string keys, not \(args[0].typeName)", expr)
            }
            var current = RulesValue.map(m)
            for k in keys {
                guard case .map(let inner) = current, let next = inner[bytes: k] else { return args[1] }
                current = next
            }
            return current
        case "diff":
            try arity(args, 1, name, expr)
            guard case .map(let other) = args[0] else { throw fail("diff() takes a map, not \(args[0].typeName)", expr) }
            return .mapDiff(MapDiff(left: m, right: other))
        default:
            throw fail("map has no method \(name)()", expr)
        }
    }

    private func diffMethod(_ d: MapDiff, _ name: String, _ args: [RulesValue], _ expr: Expr) throws(EvalFailure) -> RulesValue {
        try arity(args, 0, name, expr)
        switch name {
        case "affectedKeys": return .set(Evaluation.strings(d.affectedKeys))
        case "addedKeys": return .set(Evaluation.strings(d.addedKeys))
        case "removedKeys": return .set(Evaluation.strings(d.removedKeys))
        case "changedKeys": return .set(Evaluation.strings(d.changedKeys))
        case "unchangedKeys": return .set(Evaluation.strings(d.unchangedKeys))
        default: throw fail("map diff has no method \(name)()", expr)
        }
    }

    /// Distinct elements in first-seen order.
    static func distinct(_ items: [RulesValue]) -> [RulesValue] {
        var seen = Set<HashKey>(minimumCapacity: items.count)
        var out: [RulesValue] = []
        for item in items where seen.insert(HashKey(item)).inserted { out.append(item) }
        return out
    }

    func elements(_ v: RulesValue, _ name: String, _ expr: Expr) throws(EvalFailure) -> [RulesValue] {
        switch v {
        case .list(let items), .set(let items): return items
        default: throw fail("\(name)() takes a list or a set, not \(v.typeName)", expr)
        }
    }

    /// hasAll, hasAny, hasOnly and size, shared by lists and sets. A list's take a list and compare
    /// as list elements do (`[1.0].hasAny([1])` is false); a set's take a list or a set and
    /// compare as set elements do.
    private func membership(_ items: [RulesValue], isSet: Bool, _ name: String, _ args: [RulesValue], _ expr: Expr) throws(EvalFailure) -> RulesValue? {
        switch name {
        case "hasAll", "hasAny", "hasOnly":
            try arity(args, 1, name, expr)
            let other = isSet ? try elements(args[0], name, expr) : try onlyList(args[0], name, expr)
            let key = { (v: RulesValue) in HashKey(v, typed: !isSet) }
            switch name {
            case "hasAll":
                let mine = Set(items.map(key))
                return .bool(other.allSatisfy { mine.contains(key($0)) })
            case "hasAny":
                let mine = Set(items.map(key))
                return .bool(other.contains { mine.contains(key($0)) })
            default:
                let allowed = Set(other.map(key))
                return .bool(items.allSatisfy { allowed.contains(key($0)) })
            }
        case "size":
            try arity(args, 0, name, expr)
            return .int(Int64(items.count))
        default:
            return nil
        }
    }

    /// The elements of a method's argument that must be a list.
    private func onlyList(_ v: RulesValue, _ name: String, _ expr: Expr) throws(EvalFailure) -> [RulesValue] {
        guard case .list(let items) = v else { throw fail("\(name)() takes a list, not \(v.typeName)", expr) }
        return items
    }

    /// The elements of a method's argument that must be a set.
    private func onlySet(_ v: RulesValue, _ name: String, _ expr: Expr) throws(EvalFailure) -> [RulesValue] {
        guard case .set(let items) = v else { throw fail("\(name)() takes a set, not \(v.typeName)", expr) }
        return items
    }

    private func listMethod(_ items: [RulesValue], _ name: String, _ args: [RulesValue], _ expr: Expr) throws(EvalFailure) -> RulesValue {
        if let v = try membership(items, isSet: false, name, args, expr) { return v }
        switch name {
        case "toSet":
            try arity(args, 0, name, expr)
            return .set(Evaluation.distinct(items))
        case "join":
            try arity(args, 1, name, expr)
            guard case .string(let separator) = args[0] else { throw fail("join() takes a string separator", expr) }
            var parts: [String] = []
            var total = 0
            for item in items {
                // Elements become text as string() makes it (`[1, true].join(',') == '1,true'`).
                guard let s = Evaluation.text(of: item) else { throw fail("join() cannot join a \(item.typeName)", expr) }
                total += s.utf8.count + separator.utf8.count
                if total > Evaluation.maxStringScalars * 4 { throw fail("join() result too long", expr) }
                parts.append(s)
            }
            return .string(parts.joined(separator: separator))
        case "concat":
            try arity(args, 1, name, expr)
            guard case .list(let other) = args[0] else { throw fail("concat() takes a list", expr) }
            return .list(items + other)
        case "removeAll":
            try arity(args, 1, name, expr)
            let drop = Set(try onlyList(args[0], name, expr).map { HashKey($0, typed: true) })
            return .list(items.filter { !drop.contains(HashKey($0, typed: true)) })
        default:
            throw fail("list has no method \(name)()", expr)
        }
    }

    private func setMethod(_ items: [RulesValue], _ name: String, _ args: [RulesValue], _ expr: Expr) throws(EvalFailure) -> RulesValue {
        if let v = try membership(items, isSet: true, name, args, expr) { return v }
        switch name {
        case "union":
            try arity(args, 1, name, expr)
            return .set(Evaluation.distinct(items + (try onlySet(args[0], name, expr))))
        case "intersection":
            try arity(args, 1, name, expr)
            let other = Set(try onlySet(args[0], name, expr).map { HashKey($0) })
            return .set(items.filter { other.contains(HashKey($0)) })
        case "difference":
            try arity(args, 1, name, expr)
            let other = Set(try onlySet(args[0], name, expr).map { HashKey($0) })
            return .set(items.filter { !other.contains(HashKey($0)) })
        default:
            throw fail("set has no method \(name)()", expr)
        }
    }

    func regex(_ v: RulesValue, _ name: String, _ expr: Expr) throws(EvalFailure) -> RulesRegex {
        guard case .string(let pattern) = v else { throw fail("\(name)() takes a regular expression string", expr) }
        do { return try RulesRegex(pattern) } catch { throw fail("invalid regular expression '\(pattern.prefix(60))': \(error.message)", expr) }
    }

    private func stringMethod(_ s: String, _ name: String, _ args: [RulesValue], _ expr: Expr) throws(EvalFailure) -> RulesValue {
        switch name {
        case "size":
            try arity(args, 0, name, expr)
            // UTF-16 code units, as Firebase counts them ('😀'.size() == 2).
            return .int(Int64(s.utf16.count))
        case "matches":
            try arity(args, 1, name, expr)
            let re = try regex(args[0], name, expr)
            do { return .bool(try re.fullMatch(s)) } catch { throw fail("matches(): \(error.message)", expr) }
        case "lower":
            try arity(args, 0, name, expr)
            return .string(s.lowercased())
        case "upper":
            try arity(args, 0, name, expr)
            return .string(s.uppercased())
        case "trim":
            try arity(args, 0, name, expr)
            let scalars = Array(s.unicodeScalars)
            let isSpace: (Unicode.Scalar) -> Bool = { $0.properties.isWhitespace }
            guard let first = scalars.firstIndex(where: { !isSpace($0) }), let last = scalars.lastIndex(where: { !isSpace($0) }) else {
                return .string("")
            }
            return .string(String(String.UnicodeScalarView(scalars[first...last])))
        case "split":
            try arity(args, 1, name, expr)
            let re = try regex(args[0], name, expr)
            let input = Array(s.unicodeScalars)
            var parts: [RulesValue] = []
            var start = 0, from = 0
            do {
                // As RE2 (Java) splits: a piece before every match, an empty match included
                // (`'abc'.split('')` begins with ''), the rest after the last one.
                var budget = RulesRegex.maxWork
                while from <= input.count, let captures = try re.firstMatch(input, from: from, budget: &budget) {
                    let m = RulesRegex.range(captures)
                    parts.append(.string(String(String.UnicodeScalarView(input[start..<m.lowerBound]))))
                    start = m.upperBound
                    from = m.isEmpty ? m.upperBound + 1 : m.upperBound
                    if parts.count > Evaluation.maxStringScalars { break }
                }
            } catch {
                throw fail("split(): \(error.message)", expr)
            }
            parts.append(.string(String(String.UnicodeScalarView(input[min(start, input.count)...]))))
            // Trailing empty pieces are dropped (`'a,b,,'.split(',') == ['a', 'b']`), all but one
            // when every piece is empty (`''.split(',') == ['']`).
            while parts.count > 1, case .string("")? = parts.last { parts.removeLast() }
            return .list(parts)
        case "replace":
            try arity(args, 2, name, expr)
            let re = try regex(args[0], name, expr)
            guard case .string(let replacement) = args[1] else { throw fail("replace() takes a replacement string", expr) }
            let input = Array(s.unicodeScalars)
            // Read at the first match, as Java's replaceAll reads it: without one, any
            // replacement leaves the string as it is.
            var parts: [ReplacementPart]?
            var out: [Unicode.Scalar] = []
            var from = 0
            var tooLong = false
            do {
                var budget = RulesRegex.maxWork
                while from <= input.count, let captures = try re.firstMatch(input, from: from, budget: &budget) {
                    let m = RulesRegex.range(captures)
                    out.append(contentsOf: input[from..<m.lowerBound])
                    if parts == nil { parts = try ReplacementPart.parse(replacement, for: re) }
                    for part in parts ?? [] {
                        switch part {
                        case .text(let text): out.append(contentsOf: text.unicodeScalars)
                        case .group(let n):
                            // A group that took no part in the match adds nothing.
                            let (a, b) = (captures[2 * n], captures[2 * n + 1])
                            if a >= 0, b >= a { out.append(contentsOf: input[a..<b]) }
                        }
                    }
                    if out.count > Evaluation.maxStringScalars { tooLong = true; break }
                    if m.isEmpty {
                        if m.lowerBound < input.count { out.append(input[m.lowerBound]) }
                        from = m.upperBound + 1
                    } else {
                        from = m.upperBound
                    }
                }
            } catch {
                throw fail("replace(): \(error.message)", expr)
            }
            if tooLong { throw fail("replace() result too long", expr) }
            if from < input.count { out.append(contentsOf: input[from...]) }
            return .string(String(String.UnicodeScalarView(out)))
        case "toUtf8":
            try arity(args, 0, name, expr)
            return .bytes(Array(s.utf8))
        default:
            throw fail("string has no method \(name)()", expr)
        }
    }

    private func timestampMethod(_ t: Timestamp, _ name: String, _ args: [RulesValue], _ expr: Expr) throws(EvalFailure) -> RulesValue {
        try arity(args, 0, name, expr)
        let (days, secondOfDay) = Evaluation.split(t.seconds)
        let civil = Civil(daysSinceEpoch: days)
        switch name {
        case "toMillis":
            let (ms, o1) = t.seconds.multipliedReportingOverflow(by: 1000)
            let (total, o2) = ms.addingReportingOverflow(Int64(t.nanos / 1_000_000))
            if o1 || o2 { throw fail("timestamp out of range for toMillis()", expr) }
            return .int(total)
        case "year": return .int(civil.year)
        case "month": return .int(civil.month)
        case "day": return .int(civil.day)
        case "hours": return .int(secondOfDay / 3600)
        case "minutes": return .int(secondOfDay / 60 % 60)
        case "seconds": return .int(secondOfDay % 60)
        case "nanos": return .int(Int64(t.nanos))
        // 1 = Monday … 7 = Sunday; 1970-01-01 was a Thursday.
        case "dayOfWeek": return .int(((days % 7) + 7 + 3) % 7 + 1)
        case "dayOfYear": return .int(days - Civil(year: civil.year, month: 1, day: 1).daysSinceEpoch + 1)
        case "date": return .timestamp(Timestamp(seconds: t.seconds - secondOfDay, nanos: 0))
        // The time of day as a duration (under a day: no overflow).
        case "time": return .duration(secondOfDay * 1_000_000_000 + Int64(t.nanos))
        default: throw fail("timestamp has no method \(name)()", expr)
        }
    }

    /// Whole days since the epoch and the second within the day (UTC).
    static func split(_ seconds: Int64) -> (Int64, Int64) {
        var days = seconds / 86_400
        var rest = seconds % 86_400
        if rest < 0 { rest += 86_400; days -= 1 }
        return (days, rest)
    }

    /// Great-circle distance in meters (haversine, mean Earth radius).
    static func distance(_ a: GeoPoint, _ b: GeoPoint) -> Double {
        let r = 6_371_008.8
        let toRadians = Double.pi / 180
        let dLat = (b.latitude - a.latitude) * toRadians
        let dLon = (b.longitude - a.longitude) * toRadians
        let h = pow(sin(dLat / 2), 2) + cos(a.latitude * toRadians) * cos(b.latitude * toRadians) * pow(sin(dLon / 2), 2)
        return 2 * r * asin(min(1, h.squareRoot()))
    }
}

/// A proleptic Gregorian date, converted to and from days since 1970-01-01 (Howard Hinnant's
/// algorithms, in integers; valid far beyond Firestore's years 1 to 9999).
struct Civil {
    var year: Int64
    var month: Int64
    var day: Int64

    init(year: Int64, month: Int64, day: Int64) {
        self.year = year
        self.month = month
        self.day = day
    }

    init(daysSinceEpoch z0: Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        day = doy - (153 * mp + 2) / 5 + 1
        month = mp < 10 ? mp + 3 : mp - 9
        year = yoe + era * 400 + (month <= 2 ? 1 : 0)
    }

    var daysSinceEpoch: Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = month > 2 ? month - 3 : month + 9
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}

/// A `replace()` replacement, read as RE2's (Java's) replaceAll reads it: `$n` is group n (as
/// many digits as name a group), `${name}` a named group, `\\` takes the next character as it is;
/// any other `$` is an error, as is a group the pattern does not have.
enum ReplacementPart {
    case text(String)
    case group(Int)

    static func parse(_ replacement: String, for re: RulesRegex) throws(RegexError) -> [ReplacementPart] {
        var parts: [ReplacementPart] = []
        var text = String.UnicodeScalarView()
        let scalars = Array(replacement.unicodeScalars)
        var i = 0
        func flush() {
            if !text.isEmpty { parts.append(.text(String(text))); text = String.UnicodeScalarView() }
        }
        while i < scalars.count {
            let c = scalars[i]
            i += 1
            if c == "\\" {
                guard i < scalars.count else { throw RegexError("character to be escaped is missing") }
                text.append(scalars[i])
                i += 1
            } else if c == "$" {
                guard i < scalars.count else { throw RegexError("illegal group reference: group index is missing") }
                flush()
                if scalars[i] == "{" {
                    guard let close = scalars[i...].firstIndex(of: "}") else { throw RegexError("named capturing group is missing trailing '}'") }
                    let name = String(String.UnicodeScalarView(scalars[(i + 1)..<close]))
                    guard let n = re.groupNames[name] else { throw RegexError("no group with name {\(name)}") }
                    parts.append(.group(n))
                    i = close + 1
                } else {
                    guard let first = scalars[i].properties.numericType == .decimal ? Int(String(scalars[i])) : nil else {
                        throw RegexError("illegal group reference")
                    }
                    guard first <= re.groupCount else { throw RegexError("no group \(first)") }
                    var n = first
                    i += 1
                    // More digits while they still name a group.
                    while i < scalars.count, let d = Int(String(scalars[i])), scalars[i].isASCII, n * 10 + d <= re.groupCount {
                        n = n * 10 + d
                        i += 1
                    }
                    parts.append(.group(n))
                }
            } else {
                text.append(c)
            }
        }
        flush()
        return parts
    }
}
