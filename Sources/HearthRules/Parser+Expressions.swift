/// Expressions, lowest precedence first: `?:`, `||`, `&&`, comparisons (`== != < <= > >= in is`),
/// `+ -`, `* / %`, unary `! -`, then member access, indexing and calls.
extension Parser {
    func node(_ kind: Expr.Kind, at token: Token, children: [Expr]) throws(RulesError) -> Expr {
        let height = 1 + (children.map(\.height).max() ?? 0)
        if height > Parser.maxHeight {
            throw error("expression nested deeper than \(Parser.maxHeight) levels", at: token)
        }
        return Expr(kind, offset: token.start, height: height)
    }

    /// Where an already-built node starts, as a token for `node(_:at:children:)`.
    func token(of expr: Expr) -> Token {
        Token(kind: .end, start: expr.offset)
    }

    mutating func parseExpression() throws(RulesError) -> Expr {
        let start = try peek()
        try enter(start)
        defer { leave() }
        let condition = try parseOr()
        guard try peek().isSymbol("?") else { return condition }
        try advance()
        let then = try parseExpression()
        try expect(":", "in a conditional (a ? b : c)")
        let otherwise = try parseExpression()
        return try node(.conditional(condition, then, otherwise), at: token(of: condition), children: [condition, then, otherwise])
    }

    mutating func parseOr() throws(RulesError) -> Expr {
        let first = try parseAnd()
        var terms = [first]
        while try peek().isSymbol("||") {
            try advance()
            terms.append(try parseAnd())
        }
        return terms.count == 1 ? first : try node(.or(terms), at: token(of: first), children: terms)
    }

    mutating func parseAnd() throws(RulesError) -> Expr {
        let first = try parseComparison()
        var terms = [first]
        while try peek().isSymbol("&&") {
            try advance()
            terms.append(try parseComparison())
        }
        return terms.count == 1 ? first : try node(.and(terms), at: token(of: first), children: terms)
    }

    static let comparisonSymbols: [String: BinaryOperator] = [
        "==": .equal, "!=": .notEqual, "<": .less, "<=": .lessOrEqual, ">": .greater, ">=": .greaterOrEqual,
    ]

    mutating func parseComparison() throws(RulesError) -> Expr {
        var left = try parseAdditive()
        while true {
            let t = try peek()
            if t.isWord("is") {
                try advance()
                let typeToken = try peek()
                if typeToken.isWord("null") {
                    throw error("null is not a type: write '== null' to test for null", at: typeToken)
                }
                guard case .identifier(let name) = typeToken.kind, let type = TypeName(rawValue: name) else {
                    let names = TypeName.allCases.map(\.rawValue).joined(separator: ", ")
                    throw error("expected a type after 'is' (\(names)), found \(Parser.describe(typeToken))", at: typeToken)
                }
                try advance()
                left = try node(.isType(left, type), at: token(of: left), children: [left])
                continue
            }
            let op: BinaryOperator
            if t.isWord("in") {
                op = .in
            } else if case .symbol(let s) = t.kind, let o = Parser.comparisonSymbols[s] {
                op = o
            } else {
                return left
            }
            try advance()
            let right = try parseAdditive()
            left = try node(.binary(op, left, right), at: token(of: left), children: [left, right])
        }
    }

    mutating func parseAdditive() throws(RulesError) -> Expr {
        var left = try parseMultiplicative()
        while true {
            let t = try peek()
            let op: BinaryOperator
            if t.isSymbol("+") { op = .add } else if t.isSymbol("-") { op = .subtract } else { return left }
            try advance()
            let right = try parseMultiplicative()
            left = try node(.binary(op, left, right), at: token(of: left), children: [left, right])
        }
    }

    mutating func parseMultiplicative() throws(RulesError) -> Expr {
        var left = try parseUnary()
        while true {
            let t = try peek()
            let op: BinaryOperator
            if t.isSymbol("*") { op = .multiply } else if t.isSymbol("/") { op = .divide } else if t.isSymbol("%") { op = .remainder } else { return left }
            try advance()
            let right = try parseUnary()
            left = try node(.binary(op, left, right), at: token(of: left), children: [left, right])
        }
    }

    mutating func parseUnary() throws(RulesError) -> Expr {
        let t = try peek()
        guard t.isSymbol("!") || t.isSymbol("-") else { return try parsePostfix() }
        try advance()
        try enter(t)
        defer { leave() }
        if t.isSymbol("-"), case .int(let digits) = try peek().kind {
            // Negative literals directly, so that -9223372036854775808 is a valid integer.
            let literal = try advance()
            guard let value = Int64("-" + digits) else {
                throw error("integer literal -\(digits) is out of range (64-bit signed)", at: literal)
            }
            return try node(.int(value), at: t, children: [])
        }
        let operand = try parseUnary()
        return try node(.unary(t.isSymbol("!") ? .not : .negate, operand), at: t, children: [operand])
    }

    mutating func parsePostfix() throws(RulesError) -> Expr {
        var value = try parsePrimary()
        while true {
            let t = try peek()
            if t.isSymbol(".") {
                try advance()
                let nameToken = try peek()
                guard case .identifier(let name) = nameToken.kind else {
                    throw error("expected a field or method name after '.', found \(Parser.describe(nameToken))", at: nameToken)
                }
                try advance()
                if try peek().isSymbol("(") {
                    let args = try parseArguments()
                    value = try node(.method(value, name, args), at: token(of: value), children: [value] + args)
                } else {
                    value = try node(.member(value, name), at: token(of: value), children: [value])
                }
            } else if t.isSymbol("[") {
                try advance()
                try enter(t)
                // `x[i]`, or a slice `x[i:j]` whose either end may be left out.
                let start = try peek().isSymbol(":") ? nil : try parseExpression()
                if let index = start, try !peek().isSymbol(":") {
                    try expect("]", "to close the index")
                    leave()
                    value = try node(.index(value, index), at: token(of: value), children: [value, index])
                } else {
                    try expect(":", "in a slice")
                    let end = try peek().isSymbol("]") ? nil : try parseExpression()
                    try expect("]", "to close the slice")
                    leave()
                    value = try node(.slice(value, start, end), at: token(of: value), children: [value] + [start, end].compactMap { $0 })
                }
            } else {
                return value
            }
        }
    }

    mutating func parseArguments() throws(RulesError) -> [Expr] {
        let open = try peek()
        try expect("(", "to begin the arguments")
        try enter(open)
        defer { leave() }
        var args: [Expr] = []
        if try peek().isSymbol(")") { try advance(); return args }
        while true {
            args.append(try parseExpression())
            let t = try peek()
            if t.isSymbol(",") { try advance(); continue }
            if t.isSymbol(")") { try advance(); return args }
            throw error("expected ',' or ')' in the arguments, found \(Parser.describe(t))", at: t)
        }
    }

    mutating func parsePrimary() throws(RulesError) -> Expr {
        let t = try peek()
        switch t.kind {
        case .int(let digits):
            try advance()
            guard let value = Int64(digits) else { throw error("integer literal \(digits) is out of range (64-bit signed)", at: t) }
            return try node(.int(value), at: t, children: [])
        case .float(let d):
            try advance()
            return try node(.float(d), at: t, children: [])
        case .string(let s):
            try advance()
            return try node(.string(s), at: t, children: [])
        case .bytes(let b):
            try advance()
            return try node(.bytes(b), at: t, children: [])
        case .identifier(let word):
            switch word {
            case "true", "false":
                try advance()
                return try node(.bool(word == "true"), at: t, children: [])
            case "null":
                try advance()
                return try node(.null, at: t, children: [])
            default:
                if Parser.reserved.contains(word) {
                    throw error("expected an expression, found the keyword '\(word)'", at: t)
                }
                try advance()
                if try peek().isSymbol("(") {
                    let args = try parseArguments()
                    return try node(.call(word, args), at: t, children: args)
                }
                return try node(.identifier(word), at: t, children: [])
            }
        case .symbol("("):
            try advance()
            let inner = try parseExpression()
            try expect(")", "to close the parenthesis")
            return inner
        case .symbol("["):
            try advance()
            try enter(t)
            defer { leave() }
            var items: [Expr] = []
            while !(try peek().isSymbol("]")) {
                items.append(try parseExpression())
                let sep = try peek()
                if sep.isSymbol(",") { try advance(); continue }
                guard sep.isSymbol("]") else { throw error("expected ',' or ']' in the list, found \(Parser.describe(sep))", at: sep) }
            }
            try advance()
            return try node(.list(items), at: t, children: items)
        case .symbol("{"):
            try advance()
            try enter(t)
            defer { leave() }
            var entries: [MapEntry] = []
            while !(try peek().isSymbol("}")) {
                let keyToken = try advance()
                let key: String
                switch keyToken.kind {
                case .string(let s): key = s
                case .identifier(let w): key = w
                default: throw error("expected a map key (a name or a string), found \(Parser.describe(keyToken))", at: keyToken)
                }
                try expect(":", "after the map key")
                entries.append(MapEntry(key: key, value: try parseExpression()))
                let sep = try peek()
                if sep.isSymbol(",") { try advance(); continue }
                guard sep.isSymbol("}") else { throw error("expected ',' or '}' in the map, found \(Parser.describe(sep))", at: sep) }
            }
            try advance()
            return try node(.map(entries), at: t, children: entries.map(\.value))
        case .symbol("/"):
            return try parsePathLiteral(at: t)
        default:
            throw error("expected an expression, found \(Parser.describe(t))", at: t)
        }
    }

    /// `/databases/$(database)/documents/members/$(request.auth.uid)`: literal segments and
    /// `$(expression)` interpolations, scanned from the source.
    mutating func parsePathLiteral(at t: Token) throws(RulesError) -> Expr {
        rewind(to: t.start)
        var parts: [PathPart] = []
        var children: [Expr] = []
        while lexer.current == "/" {
            lexer.position += 1
            let start = lexer.position
            if lexer.current == "$" && lexer.scalar(at: start + 1) == "(" {
                lexer.position += 2
                let open = Token(kind: .symbol("$("), start: start)
                try enter(open)
                let inner = try parseExpression()
                try expect(")", "to close $(…) in the path")
                leave()
                // `expect` consumed the ')' token and peeked nothing further: the lexer stands just after it.
                parts.append(.interpolated(inner))
                children.append(inner)
            } else if lexer.scalars[start...].starts(with: "(default)".unicodeScalars) {
                lexer.position += 9
                parts.append(.literal("(default)"))
            } else {
                var literal = String.UnicodeScalarView()
                // A dot belongs to the segment (`/users/john.doe`), as in Firebase's grammar.
                while let c = lexer.current, Lexer.isIdentifierPart(c) || "-~%+@.".unicodeScalars.contains(c) {
                    literal.append(c)
                    lexer.position += 1
                }
                guard !literal.isEmpty else {
                    throw error("expected a path segment or $(expression) after '/'", at: start)
                }
                parts.append(.literal(String(literal)))
            }
        }
        rewind(to: lexer.position)
        return try node(.path(parts), at: t, children: children)
    }
}
