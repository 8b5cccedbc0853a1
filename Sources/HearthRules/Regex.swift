/// Regular expressions for `string.matches()`, `split()` and `replace()`, in the RE2 syntax
/// Firebase uses (https://github.com/google/re2/wiki/Syntax), matched by simulating the NFA
/// (Thompson's construction): time is linear in the input for a given pattern, so no pattern
/// can backtrack catastrophically, and the work is bounded by `RulesRegex.maxWork` besides.
///
/// Supported: literals, `.`, `^`, `$`, classes `[a-z]` `[^…]`, `\d \D \w \W \s \S`, escaped
/// punctuation, `\n \t \r \f \v \xHH`, groups `(…)` and `(?:…)`, `|`, `* + ?` and `{n}`,
/// `{n,}`, `{n,m}` (lazy forms accepted; they match the same strings). Refused with a message:
/// flags, named groups, Unicode classes, word boundaries, backreferences. `split` and `replace`
/// take the leftmost-longest match (POSIX), where RE2 takes the leftmost-first; they differ only
/// for alternatives that are prefixes of one another.
struct RulesRegex: Sendable {
    static let maxPatternLength = 4_096
    static let maxRepeat = 1_000
    static let maxProgram = 20_000
    static let maxNesting = 100
    /// Input length times program size, per match attempt.
    static let maxWork = 20_000_000

    enum Instruction: Sendable {
        case scalar(Unicode.Scalar)
        case anyButNewline
        case set(CharacterSet, negated: Bool)
        case split(Int, Int)
        case jump(Int)
        case assertStart
        case assertEnd
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
    }

    let program: [Instruction]

    init(_ pattern: String) throws(RegexError) {
        let scalars = Array(pattern.unicodeScalars)
        if scalars.count > RulesRegex.maxPatternLength {
            throw RegexError("pattern longer than \(RulesRegex.maxPatternLength) characters")
        }
        var parser = RegexParser(scalars: scalars)
        let node = try parser.parseAll()
        var compiler = RegexCompiler()
        try compiler.emit(node)
        compiler.program.append(.match)
        program = compiler.program
    }

    /// Whether the pattern matches the whole string (as the rules' `matches` does).
    func fullMatch(_ text: String) throws(RegexError) -> Bool {
        let input = Array(text.unicodeScalars)
        try checkWork(input.count)
        var current = ThreadList(size: program.count)
        var next = ThreadList(size: program.count)
        add(0, start: 0, at: 0, count: input.count, to: &current)
        for (pos, scalar) in input.enumerated() {
            if current.threads.isEmpty { return false }
            next.clear()
            step(current, scalar, pos: pos + 1, count: input.count, into: &next)
            swap(&current, &next)
        }
        return current.threads.contains { if case .match = program[$0.pc] { return true } else { return false } }
    }

    /// The leftmost-longest match starting at or after `from`, as scalar offsets.
    func firstMatch(_ input: [Unicode.Scalar], from: Int) throws(RegexError) -> Range<Int>? {
        try checkWork(input.count)
        var current = ThreadList(size: program.count)
        var next = ThreadList(size: program.count)
        var found: Range<Int>?
        var pos = from
        while true {
            if found == nil { add(0, start: pos, at: pos, count: input.count, to: &current) }
            for t in current.threads {
                if case .match = program[t.pc] {
                    if let f = found {
                        if t.start < f.lowerBound || (t.start == f.lowerBound && pos > f.upperBound) { found = t.start..<pos }
                    } else {
                        found = t.start..<pos
                    }
                }
            }
            if let f = found { current.keep { $0.start <= f.lowerBound } }
            if pos >= input.count || (current.threads.isEmpty && found != nil) { break }
            next.clear()
            step(current, input[pos], pos: pos + 1, count: input.count, into: &next)
            swap(&current, &next)
            pos += 1
        }
        return found
    }

    private func checkWork(_ count: Int) throws(RegexError) {
        let (work, overflow) = count.multipliedReportingOverflow(by: max(program.count, 1))
        if overflow || work > RulesRegex.maxWork {
            throw RegexError("input of \(count) characters is too long for this pattern")
        }
    }

    struct Thread {
        var pc: Int
        var start: Int
    }

    /// The threads alive at one position, each program counter at most once (the first added,
    /// which has the earliest start, wins).
    struct ThreadList {
        var threads: [Thread] = []
        /// Every program counter the closure visited at this position, threads or not.
        var visited: [Int] = []
        var seen: [Bool]

        init(size: Int) { seen = Array(repeating: false, count: size) }

        mutating func keep(where wanted: (Thread) -> Bool) {
            threads = threads.filter(wanted)
        }

        mutating func clear() {
            for p in visited { seen[p] = false }
            visited.removeAll(keepingCapacity: true)
            threads.removeAll(keepingCapacity: true)
        }
    }

    /// Adds `pc` and everything reachable from it without consuming input.
    private func add(_ pc: Int, start: Int, at pos: Int, count: Int, to list: inout ThreadList) {
        var stack = [pc]
        while let p = stack.popLast() {
            guard p < program.count, !list.seen[p] else { continue }
            list.seen[p] = true
            list.visited.append(p)
            switch program[p] {
            case .jump(let target): stack.append(target)
            case .split(let a, let b): stack.append(b); stack.append(a)
            case .assertStart: if pos == 0 { stack.append(p + 1) }
            case .assertEnd: if pos == count { stack.append(p + 1) }
            default: list.threads.append(Thread(pc: p, start: start))
            }
        }
    }

    private func step(_ current: ThreadList, _ scalar: Unicode.Scalar, pos: Int, count: Int, into next: inout ThreadList) {
        for t in current.threads {
            let advances: Bool
            switch program[t.pc] {
            case .scalar(let s): advances = s == scalar
            case .anyButNewline: advances = scalar != "\n"
            case .set(let set, let negated): advances = set.contains(scalar) != negated
            default: advances = false
            }
            if advances { add(t.pc + 1, start: t.start, at: pos, count: count, to: &next) }
        }
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
    case anyButNewline
    case set(RulesRegex.CharacterSet, negated: Bool)
    case start
    case end
    case concat([RegexNode])
    case alternation([RegexNode])
    case repetition(RegexNode, min: Int, max: Int?)
}

struct RegexParser {
    let scalars: [Unicode.Scalar]
    var pos = 0
    var nesting = 0

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
                atom = .repetition(atom, min: min, max: max)
                if current == "?" { pos += 1 }  // lazy: same strings
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
            if current == "?" {
                guard pos + 1 < scalars.count, scalars[pos + 1] == ":" else {
                    throw RegexError("unsupported group syntax '(?' at offset \(pos - 1) (flags and named groups are not supported)")
                }
                pos += 2
            }
            let inner = try parseAlternation()
            guard current == ")" else { throw RegexError("missing ')'") }
            pos += 1
            nesting -= 1
            return inner
        case ".": return .anyButNewline
        case "^": return .start
        case "$": return .end
        case "[": return try parseClass()
        case "\\": return try parseEscape(inClass: false).node
        case "*", "+", "?": throw RegexError("nothing to repeat at offset \(pos - 1)")
        default: return .scalar(c)
        }
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
                        set.ranges += neg ? RulesRegex.CharacterSet.complement(of: s).ranges : s.ranges
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
        return .set(set, negated: negated)
    }
}

struct RegexCompiler {
    var program: [RulesRegex.Instruction] = []

    mutating func append(_ i: RulesRegex.Instruction) throws(RegexError) {
        if program.count >= RulesRegex.maxProgram { throw RegexError("pattern too large once repetitions are expanded") }
        program.append(i)
    }

    mutating func emit(_ node: RegexNode) throws(RegexError) {
        switch node {
        case .empty: break
        case .scalar(let s): try append(.scalar(s))
        case .anyButNewline: try append(.anyButNewline)
        case .set(let s, let negated): try append(.set(s, negated: negated))
        case .start: try append(.assertStart)
        case .end: try append(.assertEnd)
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
        case .repetition(let inner, let min, let max):
            for _ in 0..<min { try emit(inner) }
            if let max {
                // (inner (inner …)?)? for the optional copies.
                var splits: [Int] = []
                for _ in min..<max {
                    splits.append(program.count)
                    try append(.split(0, 0))
                    try emit(inner)
                }
                for s in splits { program[s] = .split(s + 1, program.count) }
            } else {
                let loop = program.count
                try append(.split(0, 0))
                try emit(inner)
                try append(.jump(loop))
                program[loop] = .split(loop + 1, program.count)
            }
        }
    }
}
