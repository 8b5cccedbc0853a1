/// A recursive-descent parser for the subset of Firebase's rules language Hearth implements
/// (https://firebase.google.com/docs/rules/rules-language), version 2 only. Anything outside the
/// subset is an error naming the line and column, never skipped: a rule Hearth would misread is
/// worse than one it refuses.
///
/// Nesting (blocks, brackets, unary operators) stops at `maxNesting` levels and expression trees at
/// `maxHeight`, so neither parsing nor evaluation recurses without bound on a hostile file.
struct Parser {
    static let maxNesting = 100
    static let maxHeight = 150

    var lexer: Lexer
    private var lookahead: Token?
    private var nesting = 0

    init(_ source: String, fileName: String) {
        lexer = Lexer(source, fileName: fileName)
    }

    // MARK: Tokens

    mutating func peek() throws(RulesError) -> Token {
        if let lookahead { return lookahead }
        let t = try lexer.next()
        lookahead = t
        return t
    }

    @discardableResult
    mutating func advance() throws(RulesError) -> Token {
        let t = try peek()
        lookahead = nil
        return t
    }

    /// Drops the lookahead and puts the lexer at `offset`, to scan raw source from there.
    mutating func rewind(to offset: Int) {
        lookahead = nil
        lexer.position = offset
    }

    func error(_ message: String, at token: Token) -> RulesError { lexer.error(message, at: token.start) }
    func error(_ message: String, at offset: Int) -> RulesError { lexer.error(message, at: offset) }


    static func describe(_ t: Token) -> String {
        switch t.kind {
        case .identifier(let w): return "'\(w)'"
        case .int(let s): return "'\(s)'"
        case .float(let d): return "'\(d)'"
        case .string: return "a string"
        case .bytes: return "a bytes literal"
        case .symbol(let s): return "'\(s)'"
        case .end: return "the end of the file"
        }
    }

    mutating func expect(_ symbol: String, _ context: String) throws(RulesError) {
        let t = try peek()
        guard t.isSymbol(symbol) else { throw error("expected '\(symbol)' \(context), found \(Parser.describe(t))", at: t) }
        try advance()
    }

    mutating func expectWord(_ word: String, _ context: String) throws(RulesError) {
        let t = try peek()
        guard t.isWord(word) else { throw error("expected '\(word)' \(context), found \(Parser.describe(t))", at: t) }
        try advance()
    }

    mutating func identifier(_ what: String) throws(RulesError) -> String {
        let t = try peek()
        guard case .identifier(let name) = t.kind, !Parser.reserved.contains(name) else {
            throw error("expected \(what), found \(Parser.describe(t))", at: t)
        }
        try advance()
        return name
    }

    static let reserved: Set<String> = [
        "allow", "match", "function", "let", "return", "if", "service", "rules_version", "true", "false", "null", "in", "is",
    ]

    mutating func enter(_ token: Token) throws(RulesError) {
        nesting += 1
        if nesting > Parser.maxNesting {
            throw error("nesting deeper than \(Parser.maxNesting) levels", at: token)
        }
    }

    mutating func leave() { nesting -= 1 }

    // MARK: File structure

    /// `rules_version = '2'; service cloud.firestore { … }` and nothing after.
    mutating func parseFile() throws(RulesError) -> RulesFile {
        let first = try peek()
        guard first.isWord("rules_version") else {
            throw error("expected rules_version = '2'; first: Hearth implements version 2 of the rules language only", at: first)
        }
        try advance()
        try expect("=", "after rules_version")
        let version = try advance()
        guard case .string(let v) = version.kind else {
            throw error("expected the version as a string ('2'), found \(Parser.describe(version))", at: version)
        }
        guard v == "2" else {
            throw error("rules_version '\(v)' is not supported: Hearth implements version '2'", at: version)
        }
        try expect(";", "after rules_version = '2'")

        try expectWord("service", "after rules_version")
        let serviceToken = try peek()
        var service = try identifier("a service name")
        while try peek().isSymbol(".") {
            try advance()
            service += "." + (try identifier("a service name"))
        }
        guard service == "cloud.firestore" else {
            throw error("service \(service) is not supported: Hearth implements service cloud.firestore only", at: serviceToken)
        }
        let open = try peek()
        try expect("{", "after service cloud.firestore")
        try enter(open)
        var functions: [FunctionDecl] = []
        var root: MatchBlock?
        var databaseWildcard = "database"
        while true {
            let t = try peek()
            if t.isSymbol("}") { try advance(); break }
            if t.isWord("function") {
                functions.append(try parseFunction())
            } else if t.isWord("match") {
                if root != nil {
                    throw error("a second match at service level: put every rule inside one match /databases/{database}/documents", at: t)
                }
                try advance()
                let (pattern, offset) = try parseMatchPath(at: t, enclosingRecursive: false)
                guard pattern.count == 3, case .literal("databases") = pattern[0], case .single(let db) = pattern[1],
                      case .literal("documents") = pattern[2]
                else {
                    throw error("the service's match must be /databases/{database}/documents (every rule goes inside it)", at: t)
                }
                databaseWildcard = db
                var block = MatchBlock(pattern: pattern, offset: offset)
                try parseMatchBody(into: &block, recursiveAbove: false)
                root = block
            } else if t.kind == .end {
                throw error("missing '}' to close service cloud.firestore", at: t)
            } else if t.isWord("allow") {
                throw error("allow must be inside match /databases/{database}/documents { … }", at: t)
            } else {
                throw error("expected 'match' or 'function' inside service cloud.firestore, found \(Parser.describe(t))", at: t)
            }
        }
        leave()
        let end = try peek()
        guard end.kind == .end else { throw error("unexpected \(Parser.describe(end)) after the service's closing '}'", at: end) }
        guard let root else {
            throw error("no match /databases/{database}/documents block: with no rules every request is denied; write the block to say so", at: end)
        }
        return RulesFile(serviceFunctions: functions, root: root, databaseWildcard: databaseWildcard)
    }

    /// `{ (match | allow | function)* }` after a match path.
    mutating func parseMatchBody(into block: inout MatchBlock, recursiveAbove: Bool) throws(RulesError) {
        let open = try peek()
        try expect("{", "after the match path")
        try enter(open)
        let hasRecursive = recursiveAbove || block.pattern.contains { if case .recursive = $0 { return true } else { return false } }
        while true {
            let t = try peek()
            if t.isSymbol("}") { try advance(); break }
            if t.isWord("match") {
                try advance()
                let (pattern, offset) = try parseMatchPath(at: t, enclosingRecursive: hasRecursive)
                var child = MatchBlock(pattern: pattern, offset: offset)
                try parseMatchBody(into: &child, recursiveAbove: hasRecursive)
                block.children.append(child)
            } else if t.isWord("allow") {
                block.allows.append(try parseAllow())
            } else if t.isWord("function") {
                block.functions.append(try parseFunction())
            } else if t.kind == .end {
                let l = lexer.location(block.offset)
                throw error("missing '}' to close the match block at line \(l.line), column \(l.column)", at: t)
            } else {
                throw error("expected 'match', 'allow' or 'function' inside a match block, found \(Parser.describe(t))", at: t)
            }
        }
        leave()
    }

    /// A match path, scanned from the source: `/literal`, `/{name}`, `/{name=**}` segments.
    /// Version 2 lets the one recursive wildcard stand anywhere (`/{path=**}/items/{item}` for
    /// collection-group queries); a second one in the same chain of blocks is refused.
    mutating func parseMatchPath(at matchToken: Token, enclosingRecursive: Bool) throws(RulesError) -> ([PatternSegment], Int) {
        let next = try peek()
        guard next.isSymbol("/") else {
            throw error("expected a path starting with '/' after match, found \(Parser.describe(next))", at: next)
        }
        rewind(to: next.start)
        var segments: [PatternSegment] = []
        var recursive = enclosingRecursive
        while lexer.current == "/" {
            lexer.position += 1
            let start = lexer.position
            if lexer.current == "{" {
                lexer.position += 1
                var inner = String.UnicodeScalarView()
                while let c = lexer.current, c != "}" {
                    if c == "\n" || c == "{" || c == "/" { throw error("unterminated wildcard: expected '}'", at: start) }
                    inner.append(c)
                    lexer.position += 1
                }
                guard lexer.current == "}" else { throw error("unterminated wildcard: expected '}'", at: start) }
                lexer.position += 1
                let text = String(inner)
                let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = String(parts[0])
                guard let f = name.unicodeScalars.first, Lexer.isIdentifierStart(f),
                      name.unicodeScalars.allSatisfy(Lexer.isIdentifierPart) else {
                    throw error("invalid wildcard name '\(name)': a wildcard is {name} or {name=**}", at: start)
                }
                if parts.count == 2 {
                    guard parts[1] == "**" else {
                        throw error("invalid wildcard {\(text)}: only {\(name)} (one segment) and {\(name)=**} (any number) exist", at: start)
                    }
                    if recursive {
                        throw error("a second recursive wildcard {\(name)=**}: a path (with its enclosing match blocks) may have only one", at: start)
                    }
                    recursive = true
                    segments.append(.recursive(name))
                } else {
                    segments.append(.single(name))
                }
            } else {
                var literal = String.UnicodeScalarView()
                while let c = lexer.current, Parser.isMatchLiteral(c) {
                    literal.append(c)
                    lexer.position += 1
                }
                if lexer.current == "*" {
                    throw error("'*' outside a wildcard: write {name} for one segment or {name=**} for any number", at: lexer.position)
                }
                guard !literal.isEmpty else { throw error("empty segment in match path", at: start) }
                segments.append(.literal(String(literal)))
            }
        }
        lookahead = nil
        return (segments, next.start)
    }

    static func isMatchLiteral(_ c: Unicode.Scalar) -> Bool {
        Lexer.isIdentifierPart(c) || "-.~%+@:".unicodeScalars.contains(c)
    }

    /// `allow m1, m2: if condition;` or `allow m1, m2;`.
    mutating func parseAllow() throws(RulesError) -> AllowRule {
        let allowToken = try advance()
        var methods: Set<RulesMethod> = []
        while true {
            let t = try peek()
            guard case .identifier(let word) = t.kind else {
                throw error("expected a method (read, write, get, list, create, update, delete), found \(Parser.describe(t))", at: t)
            }
            guard let expanded = RulesMethod.parse(word) else {
                throw error("unknown method '\(word)': expected read, write, get, list, create, update or delete", at: t)
            }
            methods.formUnion(expanded)
            try advance()
            if try peek().isSymbol(",") { try advance(); continue }
            break
        }
        let t = try peek()
        if t.isSymbol(";") {
            try advance()
            return AllowRule(methods: methods, condition: nil, offset: allowToken.start)
        }
        guard t.isSymbol(":") else {
            throw error("expected ':' (then if <condition>;) or ';' after the methods, found \(Parser.describe(t))", at: t)
        }
        try advance()
        try expectWord("if", "after 'allow …:'")
        let condition = try parseExpression()
        try expect(";", "after the condition")
        return AllowRule(methods: methods, condition: condition, offset: allowToken.start)
    }

    /// `function name(a, b) { let x = e; … return e; }`.
    mutating func parseFunction() throws(RulesError) -> FunctionDecl {
        let functionToken = try advance()
        let name = try identifier("a function name")
        try expect("(", "after the function name")
        var params: [String] = []
        if !(try peek().isSymbol(")")) {
            while true {
                let p = try peek()
                let param = try identifier("a parameter name")
                if params.contains(param) { throw error("parameter '\(param)' appears twice", at: p) }
                params.append(param)
                if try peek().isSymbol(",") { try advance(); continue }
                break
            }
        }
        try expect(")", "after the parameters")
        let open = try peek()
        try expect("{", "to begin the function body")
        try enter(open)
        var lets: [LetBinding] = []
        while try peek().isWord("let") {
            try advance()
            let n = try peek()
            let variable = try identifier("a variable name after let")
            if params.contains(variable) || lets.contains(where: { $0.name == variable }) {
                throw error("'\(variable)' is already defined in this function", at: n)
            }
            try expect("=", "after let \(variable)")
            let value = try parseExpression()
            try expect(";", "after let \(variable) = …")
            lets.append(LetBinding(name: variable, value: value))
        }
        let r = try peek()
        guard r.isWord("return") else {
            throw error("expected 'return <expression>;' (a function body is let bindings, then one return), found \(Parser.describe(r))", at: r)
        }
        try advance()
        let body = try parseExpression()
        try expect(";", "after the return expression")
        try expect("}", "to close the function body")
        leave()
        return FunctionDecl(name: name, params: params, lets: lets, body: body, offset: functionToken.start)
    }
}
