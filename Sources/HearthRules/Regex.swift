/// Regular expressions for `string.matches()`, `split()` and `replace()`, in the RE2 syntax
/// Firebase uses (https://github.com/google/re2/wiki/Syntax), matched by simulating the NFA
/// (Thompson's construction, with captures as in Pike's VM): time is linear in the input for a
/// given pattern, so no pattern can backtrack catastrophically, and the work is bounded by
/// `RulesRegex.maxWork` besides.
///
/// Supported: literals, `.`, `^`, `$`, classes `[a-z]` `[^…]`, `\d \D \w \W \s \S`, escaped
/// punctuation, `\n \t \r \f \v \xHH`, groups `(…)`, `(?:…)` and `(?P<name>…)`, `|`, greedy and
/// lazy `* + ?` and `{n}`, `{n,}`, `{n,m}`, and the flags `i` (case-insensitive, by simple case
/// folding), `m` (`^`/`$` at line breaks), `s` (`.` matches `\n`) and `U` (greediness swapped) as
/// `(?flags)` and `(?flags:…)`, `-` turning them off. Refused with a message: Unicode classes, word
/// boundaries, backreferences. As RE2 does, `split` and `replace` take the leftmost-first match
/// (alternatives in order, greedy repetition as long as it can); `replace` fills `$1`, `${name}`.
struct RulesRegex: Sendable {
    static let maxPatternLength = 4_096
    static let maxRepeat = 1_000
    static let maxProgram = 20_000
    static let maxNesting = 100
    /// Input length times program size, per match attempt.
    static let maxWork = 20_000_000

    enum Instruction: Sendable {
        case scalar(Unicode.Scalar)
        case any
        case anyButNewline
        case set(CharacterSet, negated: Bool)
        case split(Int, Int)
        case jump(Int)
        case assertStart
        case assertEnd
        case assertLineStart
        case assertLineEnd
        /// Records the position in capture slot n (group n/2's start or end).
        case save(Int)
        case match
    }

    /// Ranges of scalar values.
    struct CharacterSet: Sendable {
        var ranges: [ClosedRange<UInt32>] = []

        func contains(_ s: Unicode.Scalar) -> Bool { ranges.contains { $0.contains(s.value) } }

        static let digits = CharacterSet(ranges: [48...57])
        static let word = CharacterSet(ranges: [48...57, 65...90, 95...95, 97...122])
        static let space = CharacterSet(ranges: [9...10, 12...13, 32...32])
        static func complement(of set: CharacterSet) -> CharacterSet {
            var out: [ClosedRange<UInt32>] = []
            var next: UInt32 = 0
            for r in set.ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
                if r.lowerBound > next { out.append(next...(r.lowerBound - 1)) }
                next = max(next, r.upperBound &+ 1)
            }
            if next <= 0x10FFFF { out.append(next...0x10FFFF) }
            return CharacterSet(ranges: out)
        }

        /// The set with every scalar's case variants added (classes under `(?i)`): only the
        /// scalars that have variants are visited, found in `CaseFolding`'s sorted table.
        func caseFolded() -> CharacterSet {
            var out = self
            let folding = CaseFolding.table
            for r in ranges {
                var i = folding.firstIndex(atLeast: r.lowerBound)
                while i < folding.scalars.count, folding.scalars[i] <= r.upperBound {
                    for other in folding.orbits[i] { out.ranges.append(other...other) }
                    i += 1
                }
            }
            return out
        }
    }

    let program: [Instruction]
    /// Capturing groups, not counting the whole match (group 0).
    let groupCount: Int
    /// `(?P<name>…)` groups' numbers.
    let groupNames: [String: Int]

    init(_ pattern: String) throws(RegexError) {
        let scalars = Array(pattern.unicodeScalars)
        if scalars.count > RulesRegex.maxPatternLength {
            throw RegexError("pattern longer than \(RulesRegex.maxPatternLength) characters")
        }
        var parser = RegexParser(scalars: scalars)
        let node = try parser.parseAll()
        var compiler = RegexCompiler()
        try compiler.emit(.group(0, node))
        compiler.program.append(.match)
        program = compiler.program
        groupCount = parser.groupCount
        groupNames = parser.groupNames
    }

    /// Whether the pattern matches the whole string (as the rules' `matches` does).
    func fullMatch(_ text: String) throws(RegexError) -> Bool {
        let input = Array(text.unicodeScalars)
        var budget = RulesRegex.maxWork
        try spend(input.count, slots: 0, from: &budget)
        var current = ThreadList(size: program.count, slots: 0)
        var next = ThreadList(size: program.count, slots: 0)
        add(0, [], at: 0, in: input, to: &current)
        for pos in input.indices {
            if current.threads.isEmpty { return false }
            next.clear()
            for t in current.threads where advances(program[t.pc], input[pos]) {
                add(t.pc + 1, t.captures, at: pos + 1, in: input, to: &next)
            }
            swap(&current, &next)
        }
        return current.threads.contains { if case .match = program[$0.pc] { return true } else { return false } }
    }

    /// The leftmost-first match starting at or after `from` (RE2's, and so Firebase's): its
    /// capture slots, two per group, group 0 the whole match; -1 for a group that took no part.
    /// Each position scanned is charged to `budget` (one for all the searches of a `split` or a
    /// `replace`), with the copying of the capture slots.
    func firstMatch(_ input: [Unicode.Scalar], from: Int, budget: inout Int) throws(RegexError) -> [Int]? {
        let slots = 2 * (groupCount + 1)
        try spend(max(input.count - from, 1), slots: slots, from: &budget)
        var current = ThreadList(size: program.count, slots: slots)
        var next = ThreadList(size: program.count, slots: slots)
        var found: [Int]?
        var pos = from
        while true {
            // A match starting here ranks below every thread started earlier.
            if found == nil { add(0, Array(repeating: -1, count: slots), at: pos, in: input, to: &current) }
            next.clear()
            for t in current.threads {
                if case .match = program[t.pc] {
                    // Threads after this one rank lower: the match stands unless one before it
                    // goes on to match later.
                    found = t.captures
                    break
                }
                if pos < input.count, advances(program[t.pc], input[pos]) {
                    add(t.pc + 1, t.captures, at: pos + 1, in: input, to: &next)
                }
            }
            if pos >= input.count || (next.threads.isEmpty && found != nil) { break }
            swap(&current, &next)
            pos += 1
        }
        return found
    }

    /// The range of a match's group 0.
    static func range(_ captures: [Int]) -> Range<Int> { captures[0]..<captures[1] }

    /// Charges `count` positions of the program (each thread copying `slots` capture slots) to
    /// `budget`, refusing the work past it.
    private func spend(_ count: Int, slots: Int, from budget: inout Int) throws(RegexError) {
        let perPosition = max(program.count, 1).multipliedReportingOverflow(by: 1 + slots / 16)
        let (work, overflow) = count.multipliedReportingOverflow(by: perPosition.partialValue)
        if perPosition.overflow || overflow || work > budget {
            throw RegexError("input of \(count) characters is too long for this pattern")
        }
        budget -= work
    }

    struct Thread {
        var pc: Int
        /// Capture slots (empty when only matching, not searching).
        var captures: [Int]
    }

    /// The threads alive at one position, in priority order, each program counter at most once
    /// (the first added ranks highest and wins).
    struct ThreadList {
        var threads: [Thread] = []
        /// Every program counter the closure visited at this position, threads or not.
        var visited: [Int] = []
        var seen: [Bool]
        let slots: Int

        init(size: Int, slots: Int) {
            seen = Array(repeating: false, count: size)
            self.slots = slots
        }

        mutating func clear() {
            for p in visited { seen[p] = false }
            visited.removeAll(keepingCapacity: true)
            threads.removeAll(keepingCapacity: true)
        }
    }

    private func advances(_ instruction: Instruction, _ scalar: Unicode.Scalar) -> Bool {
        switch instruction {
        case .scalar(let s): return s == scalar
        case .any: return true
        case .anyButNewline: return scalar != "\n"
        case .set(let set, let negated): return set.contains(scalar) != negated
        default: return false
        }
    }

    /// Adds `pc` and everything reachable from it without consuming input, depth first in
    /// priority order (a split's first branch first), recording captures on the way.
    private func add(_ pc: Int, _ captures: [Int], at pos: Int, in input: [Unicode.Scalar], to list: inout ThreadList) {
        var stack: [(Int, [Int])] = [(pc, captures)]
        while let (p, caps) = stack.popLast() {
            guard p < program.count, !list.seen[p] else { continue }
            list.seen[p] = true
            list.visited.append(p)
            switch program[p] {
            case .jump(let target): stack.append((target, caps))
            case .split(let a, let b): stack.append((b, caps)); stack.append((a, caps))
            case .assertStart: if pos == 0 { stack.append((p + 1, caps)) }
            case .assertEnd: if pos == input.count { stack.append((p + 1, caps)) }
            case .assertLineStart: if pos == 0 || input[pos - 1] == "\n" { stack.append((p + 1, caps)) }
            case .assertLineEnd: if pos == input.count || input[pos] == "\n" { stack.append((p + 1, caps)) }
            case .save(let slot):
                var saved = caps
                if slot < saved.count { saved[slot] = pos }
                stack.append((p + 1, saved))
            default: list.threads.append(Thread(pc: p, captures: caps))
            }
        }
    }
}

/// Simple case folding for `(?i)`: a scalar's orbit is itself, its one-scalar lower-, upper- and
/// title-case mappings, theirs in turn, and the few scalars that fold into another without being
/// its mapping (KELVIN SIGN into k, LONG S into s…), as RE2 folds them.
enum CaseFolding {
    /// Every scalar that has case variants, sorted, with its variants (itself excluded): built
    /// once, on the first `(?i)` class, from the orbits of all scalars, so that the relation is
    /// symmetric (ϐ is found from β as β from ϐ).
    struct Table: Sendable {
        var scalars: [UInt32]
        var orbits: [[UInt32]]

        /// The index of the first scalar at or above `value`.
        func firstIndex(atLeast value: UInt32) -> Int {
            var low = 0, high = scalars.count
            while low < high {
                let mid = (low + high) / 2
                if scalars[mid] < value { low = mid + 1 } else { high = mid }
            }
            return low
        }
    }

    static let table: Table = {
        var related: [UInt32: Set<UInt32>] = [:]
        for v in UInt32(0)...0x1FFFF {
            guard let s = Unicode.Scalar(v) else { continue }
            let props = s.properties
            guard props.changesWhenCaseMapped || extraFolds[v] != nil else { continue }
            for other in orbit(of: s) where other != s {
                related[v, default: []].insert(other.value)
                related[other.value, default: []].insert(v)
            }
        }
        // Close each group: every member relates to every other.
        var groups: [UInt32: Set<UInt32>] = [:]
        for v in related.keys.sorted() where groups[v] == nil {
            var group: Set<UInt32> = [v]
            var pending = [v]
            while let x = pending.popLast() {
                for y in related[x] ?? [] where group.insert(y).inserted { pending.append(y) }
            }
            for member in group { groups[member] = group }
        }
        let scalars = groups.keys.sorted()
        return Table(scalars: scalars, orbits: scalars.map { v in (groups[v] ?? []).subtracting([v]).sorted() })
    }()

    /// Letters that fold only in Turkish (dotted capital I, dotless small i): RE2's simple folding
    /// leaves them alone.
    static let turkish: Set<UInt32> = [0x130, 0x131]

    /// Scalars that fold to a letter they are not a case mapping of.
    static let extraFolds: [UInt32: [UInt32]] = [
        0x6B: [0x212A], 0x4B: [0x212A], 0x212A: [0x6B, 0x4B],  // k K KELVIN SIGN
        0x73: [0x17F], 0x53: [0x17F], 0x17F: [0x73, 0x53],  // s S LONG S
        0xE5: [0x212B], 0xC5: [0x212B], 0x212B: [0xE5, 0xC5],  // å Å ANGSTROM SIGN
        0x3BC: [0xB5], 0x39C: [0xB5], 0xB5: [0x3BC, 0x39C],  // μ Μ MICRO SIGN
        0x3B9: [0x1FBE, 0x345], 0x399: [0x1FBE, 0x345], 0x1FBE: [0x3B9, 0x399], 0x345: [0x3B9, 0x399],
        0x3C3: [0x3C2], 0x3A3: [0x3C2], 0x3C2: [0x3C3, 0x3A3],  // σ Σ ς
        0xDF: [0x1E9E], 0x1E9E: [0xDF],  // ß ẞ
    ]

    static func orbit(of scalar: Unicode.Scalar) -> [Unicode.Scalar] {
        var out: [Unicode.Scalar] = [scalar]
        if turkish.contains(scalar.value) { return out }
        var i = 0
        while i < out.count, out.count < 16 {
            let s = out[i]
            let props = s.properties
            for mapping in [props.lowercaseMapping, props.uppercaseMapping, props.titlecaseMapping] {
                let scalars = mapping.unicodeScalars
                if scalars.count == 1, let m = scalars.first, !out.contains(m), !turkish.contains(m.value) { out.append(m) }
            }
            for v in extraFolds[s.value] ?? [] {
                if let m = Unicode.Scalar(v), !out.contains(m) { out.append(m) }
            }
            i += 1
        }
        return out
    }
}

struct RegexError: Error, Sendable {
    var message: String
    init(_ message: String) { self.message = message }
}

/// The pattern's syntax tree.
indirect enum RegexNode {
    case empty
    case scalar(Unicode.Scalar)
    case any
    case anyButNewline
    case set(RulesRegex.CharacterSet, negated: Bool)
    case start
    case end
    case lineStart
    case lineEnd
    case concat([RegexNode])
    case alternation([RegexNode])
    case repetition(RegexNode, min: Int, max: Int?, greedy: Bool)
    case group(Int, RegexNode)
}

/// The flags `(?imsU)` in force at a point of the pattern.
struct RegexFlags {
    var caseInsensitive = false
    var multiLine = false
    var dotAll = false
    var ungreedy = false
}

struct RegexParser {
    let scalars: [Unicode.Scalar]
    var pos = 0
    var nesting = 0
    var flags = RegexFlags()
    var groupCount = 0
    var groupNames: [String: Int] = [:]

    var current: Unicode.Scalar? { pos < scalars.count ? scalars[pos] : nil }

    mutating func parseAll() throws(RegexError) -> RegexNode {
        let node = try parseAlternation()
        if pos < scalars.count { throw RegexError("unmatched ')' at offset \(pos)") }
        return node
    }

    mutating func parseAlternation() throws(RegexError) -> RegexNode {
        var branches = [try parseConcat()]
        while current == "|" {
            pos += 1
            branches.append(try parseConcat())
        }
        return branches.count == 1 ? branches[0] : .alternation(branches)
    }

    mutating func parseConcat() throws(RegexError) -> RegexNode {
        var items: [RegexNode] = []
        while let c = current, c != "|", c != ")" {
            var atom = try parseAtom()
            while let q = current, q == "*" || q == "+" || q == "?" || q == "{" {
                guard let (min, max) = try parseQuantifier() else { break }
                if case .repetition = atom { throw RegexError("a quantifier after a quantifier at offset \(pos)") }
                var lazy = false
                if current == "?" { pos += 1; lazy = true }
                atom = .repetition(atom, min: min, max: max, greedy: lazy == flags.ungreedy)
            }
            items.append(atom)
        }
        return items.count == 1 ? items[0] : (items.isEmpty ? .empty : .concat(items))
    }

    /// `*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`; nil for a `{` that is a literal (as in RE2).
    mutating func parseQuantifier() throws(RegexError) -> (Int, Int?)? {
        guard let q = current else { return nil }
        switch q {
        case "*": pos += 1; return (0, nil)
        case "+": pos += 1; return (1, nil)
        case "?": pos += 1; return (0, 1)
        default:
            let save = pos
            pos += 1
            guard let min = number() else { pos = save; return nil }
            var max: Int? = min
            if current == "," {
                pos += 1
                max = current == "}" ? nil : number()
                if max == nil && current != "}" { pos = save; return nil }
            }
            guard current == "}" else { pos = save; return nil }
            pos += 1
            if min > RulesRegex.maxRepeat || (max ?? 0) > RulesRegex.maxRepeat {
                throw RegexError("repetition count above \(RulesRegex.maxRepeat)")
            }
            if let max, max < min { throw RegexError("bad repetition {\(min),\(max)}") }
            return (min, max)
        }
    }

    mutating func number() -> Int? {
        var value = 0
        var digits = 0
        while let c = current, c >= "0" && c <= "9" {
            value = Swift.min(value * 10 + Int(c.value - 48), 100_000)
            digits += 1
            pos += 1
        }
        return digits == 0 ? nil : value
    }

    mutating func parseAtom() throws(RegexError) -> RegexNode {
        guard let c = current else { throw RegexError("unexpected end of pattern") }
        pos += 1
        switch c {
        case "(":
            nesting += 1
            if nesting > RulesRegex.maxNesting { throw RegexError("groups nested deeper than \(RulesRegex.maxNesting)") }
            // Flags set inside a group last until its end.
            let outer = flags
            var capture: Int?
            if current == "?" {
                pos += 1
                if current == "P" || current == "<" {
                    capture = try parseGroupName()
                } else if try parseFlags() {
                    // `(?flags)`: in force for the rest of the enclosing group.
                    nesting -= 1
                    return .empty
                }
            } else {
                groupCount += 1
                capture = groupCount
            }
            let inner = try parseAlternation()
            guard current == ")" else { throw RegexError("missing ')'") }
            pos += 1
            nesting -= 1
            flags = outer
            return capture.map { .group($0, inner) } ?? inner
        case ".": return flags.dotAll ? .any : .anyButNewline
        case "^": return flags.multiLine ? .lineStart : .start
        case "$": return flags.multiLine ? .lineEnd : .end
        case "[": return try parseClass()
        case "\\": return folded(try parseEscape(inClass: false).node)
        case "*", "+", "?": throw RegexError("nothing to repeat at offset \(pos - 1)")
        default: return folded(.scalar(c))
        }
    }

    /// A literal or a class (`\w` too) under `(?i)` matches its case variants.
    func folded(_ node: RegexNode) -> RegexNode {
        guard flags.caseInsensitive else { return node }
        switch node {
        case .scalar(let s):
            let folded = RulesRegex.CharacterSet(ranges: [s.value...s.value]).caseFolded()
            return folded.ranges.count == 1 ? node : .set(folded, negated: false)
        case .set(let set, let negated):
            return .set(set.caseFolded(), negated: negated)
        default:
            return node
        }
    }

    /// After `(?`: flags `imsU`, `-` before those to turn off, then `)` (for the rest of the
    /// enclosing group: returns true) or `:` (for a group: returns false).
    mutating func parseFlags() throws(RegexError) -> Bool {
        let at = pos - 2
        var on = true
        var any = false
        var afterDash = false
        while let c = current {
            pos += 1
            switch c {
            case "i": flags.caseInsensitive = on
            case "m": flags.multiLine = on
            case "s": flags.dotAll = on
            case "U": flags.ungreedy = on
            case "-":
                guard on else { throw RegexError("bad flags at offset \(at)") }
                on = false
                afterDash = true
                continue
            case ")", ":":
                // `(?)`, `(?-)` and `(?i-:` name no flag to change.
                if afterDash || (c == ")" && !any) { throw RegexError("bad flags at offset \(at)") }
                return c == ")"
            default:
                throw RegexError("unsupported group syntax '(?\(c)' at offset \(at)")
            }
            any = true
            afterDash = false
        }
        throw RegexError("missing ')'")
    }

    /// After `(?`: `P<name>` or `<name>`; the group's number.
    mutating func parseGroupName() throws(RegexError) -> Int {
        if current == "P" { pos += 1 }
        guard current == "<" else { throw RegexError("bad named group at offset \(pos)") }
        pos += 1
        var name = String.UnicodeScalarView()
        while let c = current, c != ">" {
            guard c.properties.isAlphabetic || c == "_" || (c >= "0" && c <= "9"), c.isASCII else {
                throw RegexError("bad group name at offset \(pos)")
            }
            name.append(c)
            pos += 1
        }
        guard current == ">", !name.isEmpty else { throw RegexError("bad named group at offset \(pos)") }
        pos += 1
        let text = String(name)
        guard groupNames[text] == nil else { throw RegexError("duplicate group name '\(text)'") }
        groupCount += 1
        groupNames[text] = groupCount
        return groupCount
    }

    /// An escape after `\`: a single scalar or a class.
    mutating func parseEscape(inClass: Bool) throws(RegexError) -> (node: RegexNode, scalar: Unicode.Scalar?) {
        guard let e = current else { throw RegexError("trailing backslash") }
        pos += 1
        switch e {
        case "d": return (.set(.digits, negated: false), nil)
        case "D": return (.set(.digits, negated: true), nil)
        case "w": return (.set(.word, negated: false), nil)
        case "W": return (.set(.word, negated: true), nil)
        case "s": return (.set(.space, negated: false), nil)
        case "S": return (.set(.space, negated: true), nil)
        case "n": return (.scalar("\n"), "\n")
        case "t": return (.scalar("\t"), "\t")
        case "r": return (.scalar("\r"), "\r")
        case "f": return (.scalar("\u{C}"), "\u{C}")
        case "v": return (.scalar("\u{B}"), "\u{B}")
        case "x":
            var code: UInt32 = 0
            for _ in 0..<2 {
                guard let h = current, let d = Lexer.hexValue(h) else { throw RegexError("\\x needs two hexadecimal digits") }
                code = code * 16 + d
                pos += 1
            }
            let s = Unicode.Scalar(code) ?? "\u{0}"
            return (.scalar(s), s)
        default:
            if e.properties.isAlphabetic || (e >= "0" && e <= "9") {
                throw RegexError("unsupported escape '\\\(e)'")
            }
            return (.scalar(e), e)
        }
    }

    mutating func parseClass() throws(RegexError) -> RegexNode {
        var negated = false
        if current == "^" { negated = true; pos += 1 }
        var set = RulesRegex.CharacterSet()
        var first = true
        while true {
            guard let c = current else { throw RegexError("missing ']'") }
            if c == "]" && !first { pos += 1; break }
            first = false
            if c == "[" && pos + 1 < scalars.count && scalars[pos + 1] == ":" {
                throw RegexError("POSIX classes [[:name:]] are not supported")
            }
            var low: Unicode.Scalar
            pos += 1
            if c == "\\" {
                let (node, scalar) = try parseEscape(inClass: true)
                guard let scalar else {
                    if case .set(let s, let neg) = node {
                        // `[\W]` under (?i) is the complement of \w with its case variants (no k
                        // through KELVIN SIGN), as RE2 has it.
                        let positive = flags.caseInsensitive ? s.caseFolded() : s
                        set.ranges += neg ? RulesRegex.CharacterSet.complement(of: positive).ranges : positive.ranges
                    }
                    continue
                }
                low = scalar
            } else {
                low = c
            }
            if current == "-", pos + 1 < scalars.count, scalars[pos + 1] != "]" {
                pos += 1
                guard var high = current else { throw RegexError("missing ']'") }
                pos += 1
                if high == "\\" {
                    guard let s = try parseEscape(inClass: true).scalar else { throw RegexError("bad class range") }
                    high = s
                }
                guard low.value <= high.value else { throw RegexError("bad class range \(low)-\(high)") }
                set.ranges.append(low.value...high.value)
            } else {
                set.ranges.append(low.value...low.value)
            }
        }
        return .set(flags.caseInsensitive ? set.caseFolded() : set, negated: negated)
    }
}

struct RegexCompiler {
    var program: [RulesRegex.Instruction] = []
    /// Nodes emitted so far: bounded, so that repetitions of what emits nothing (`(?:){1000}`
    /// nested) cannot spin where the program's size does not grow.
    var steps = 0
    static let maxSteps = 1_000_000

    mutating func append(_ i: RulesRegex.Instruction) throws(RegexError) {
        if program.count >= RulesRegex.maxProgram { throw RegexError("pattern too large once repetitions are expanded") }
        program.append(i)
    }

    mutating func emit(_ node: RegexNode) throws(RegexError) {
        steps += 1
        if steps > RegexCompiler.maxSteps { throw RegexError("pattern too large once repetitions are expanded") }
        switch node {
        case .empty: break
        case .scalar(let s): try append(.scalar(s))
        case .any: try append(.any)
        case .anyButNewline: try append(.anyButNewline)
        case .set(let s, let negated): try append(.set(s, negated: negated))
        case .start: try append(.assertStart)
        case .end: try append(.assertEnd)
        case .lineStart: try append(.assertLineStart)
        case .lineEnd: try append(.assertLineEnd)
        case .group(let index, let inner):
            try append(.save(2 * index))
            try emit(inner)
            try append(.save(2 * index + 1))
        case .concat(let items): for i in items { try emit(i) }
        case .alternation(let branches):
            // split L1, next; L1: branch; jump end; next: split …
            var jumps: [Int] = []
            for (i, branch) in branches.enumerated() {
                if i < branches.count - 1 {
                    let split = program.count
                    try append(.split(split + 1, 0))
                    try emit(branch)
                    jumps.append(program.count)
                    try append(.jump(0))
                    program[split] = .split(split + 1, program.count)
                } else {
                    try emit(branch)
                }
            }
            for j in jumps { program[j] = .jump(program.count) }
        case .repetition(let inner, let min, let max, let greedy):
            // A greedy split tries another copy first; a lazy one, what follows.
            func choice(_ more: Int, _ done: Int) -> RulesRegex.Instruction { greedy ? .split(more, done) : .split(done, more) }
            let start = program.count
            for copy in 0..<min {
                try emit(inner)
                // What emits nothing matches nothing but the empty string, however often repeated.
                if copy == 0 && program.count == start { return }
            }
            if let max {
                // (inner (inner …)?)? for the optional copies.
                var splits: [Int] = []
                for _ in min..<max {
                    splits.append(program.count)
                    try append(.split(0, 0))
                    try emit(inner)
                }
                for s in splits { program[s] = choice(s + 1, program.count) }
            } else {
                let loop = program.count
                try append(.split(0, 0))
                try emit(inner)
                try append(.jump(loop))
                program[loop] = choice(loop + 1, program.count)
            }
        }
    }
}
