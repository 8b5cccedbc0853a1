/// A function after resolution: its body refers to parameters and lets by name (`.local`), to
/// wildcards by block depth, and to other functions by index.
struct CompiledFunction: Sendable {
    var name: String
    var params: [String]
    var lets: [LetBinding]
    var body: Expr
    var offset: Int
}

/// A match block flattened: its full path below `/databases/{database}/documents` (the
/// enclosing blocks' segments first), the nesting depth each segment was written at, and its
/// allows with resolved conditions.
struct CompiledMatch: Sendable {
    var pattern: [PatternSegment]
    var depths: [Int]
    var allows: [AllowRule]
    var offset: Int
}

/// Resolves every name in the parsed file: function calls to the lexically visible declaration
/// (the nearest enclosing block first, then the service level), identifiers to parameters,
/// lets, wildcards of enclosing blocks, `request` or `resource`. Anything else is an error at
/// load, as are calls with the wrong number of arguments and methods no type has.
struct Compiler {
    let sourceMap: SourceMap
    private(set) var functions: [CompiledFunction] = []
    private(set) var matches: [CompiledMatch] = []

    /// One level of lexical scope: a match block (or the service level, depth -1).
    final class Scope {
        let parent: Scope?
        let depth: Int
        let wildcards: [String]
        var functions: [String: Int] = [:]

        init(parent: Scope?, depth: Int, wildcards: [String]) {
            self.parent = parent
            self.depth = depth
            self.wildcards = wildcards
        }
    }

    init(sourceMap: SourceMap) {
        self.sourceMap = sourceMap
    }

    func error(_ message: String, at offset: Int) -> RulesError {
        RulesError(message, at: sourceMap.location(offset))
    }

    mutating func compile(_ file: RulesFile) throws(RulesError) {
        let service = Scope(parent: nil, depth: -1, wildcards: [])
        try declare(file.serviceFunctions, in: service)
        try compileBlock(file.root, scope: service, depth: 0, prefix: [], prefixDepths: [], isRoot: true)
        try refuseRecursion()
    }

    /// Firebase refuses a function that calls itself, directly or through others ("Recursive call
    /// is not allowed."), at load.
    private func refuseRecursion() throws(RulesError) {
        var calls: [Set<Int>] = []
        for function in functions {
            var called = Set<Int>()
            function.body.calledFunctions(into: &called)
            for binding in function.lets { binding.value.calledFunctions(into: &called) }
            calls.append(called)
        }
        // Depth-first from each function; a function met again on the current path is a cycle.
        enum Mark { case visiting, done }
        var marks: [Int: Mark] = [:]
        func visit(_ f: Int, _ path: [Int]) -> [Int]? {
            switch marks[f] {
            case .visiting?: return path + [f]
            case .done?: return nil
            case nil: break
            }
            marks[f] = .visiting
            for next in calls[f].sorted() {
                if let cycle = visit(next, path + [f]) { return cycle }
            }
            marks[f] = .done
            return nil
        }
        for f in functions.indices {
            guard let cycle = visit(f, []), let repeated = cycle.last else { continue }
            let start = cycle.firstIndex(of: repeated) ?? 0
            let names = cycle[start...].map { functions[$0].name }.joined(separator: " → ")
            throw error("Recursive call is not allowed: \(names)", at: functions[repeated].offset)
        }
    }

    /// Registers a block's functions (all before any body is resolved, so order does not matter),
    /// then resolves their bodies.
    private mutating func declare(_ decls: [FunctionDecl], in scope: Scope) throws(RulesError) {
        var first: [Int] = []
        for decl in decls {
            if scope.functions[decl.name] != nil {
                throw error("function '\(decl.name)' is declared twice in the same block", at: decl.offset)
            }
            scope.functions[decl.name] = functions.count
            first.append(functions.count)
            functions.append(CompiledFunction(name: decl.name, params: decl.params, lets: [], body: decl.body, offset: decl.offset))
        }
        for (decl, index) in zip(decls, first) {
            var locals = Set(decl.params)
            var lets: [LetBinding] = []
            for binding in decl.lets {
                lets.append(LetBinding(name: binding.name, value: try resolve(binding.value, locals: locals, scope: scope)))
                locals.insert(binding.name)
            }
            functions[index].lets = lets
            functions[index].body = try resolve(decl.body, locals: locals, scope: scope)
        }
    }

    private mutating func compileBlock(_ block: MatchBlock, scope parent: Scope, depth: Int, prefix: [PatternSegment],
                                       prefixDepths: [Int], isRoot: Bool) throws(RulesError) {
        // The root block's own path (/databases/{database}/documents) is not part of document paths;
        // its wildcard is bound separately.
        let own = isRoot ? [] : block.pattern
        let scope = Scope(parent: parent, depth: depth, wildcards: block.pattern.compactMap(\.wildcardName))
        try declare(block.functions, in: scope)
        let pattern = prefix + own
        let depths = prefixDepths + Array(repeating: depth, count: own.count)
        var allows: [AllowRule] = []
        for allow in block.allows {
            var resolved = allow
            if let condition = allow.condition { resolved.condition = try resolve(condition, locals: [], scope: scope) }
            allows.append(resolved)
        }
        if !allows.isEmpty {
            matches.append(CompiledMatch(pattern: pattern, depths: depths, allows: allows, offset: block.offset))
        }
        for child in block.children {
            try compileBlock(child, scope: scope, depth: depth + 1, prefix: pattern, prefixDepths: depths, isRoot: false)
        }
    }

    private func wildcardDepth(_ name: String, in scope: Scope) -> Int? {
        var s: Scope? = scope
        while let current = s {
            if current.wildcards.contains(name) { return current.depth }
            s = current.parent
        }
        return nil
    }

    private func function(_ name: String, in scope: Scope) -> Int? {
        var s: Scope? = scope
        while let current = s {
            if let index = current.functions[name] { return index }
            s = current.parent
        }
        return nil
    }

    private func isNamespace(_ expr: Expr, locals: Set<String>, scope: Scope) -> String? {
        guard case .identifier(let name) = expr.kind, Builtin.namespaces.contains(name),
              !locals.contains(name), wildcardDepth(name, in: scope) == nil else { return nil }
        return name
    }

    private func resolveAll(_ exprs: [Expr], locals: Set<String>, scope: Scope) throws(RulesError) -> [Expr] {
        var out: [Expr] = []
        out.reserveCapacity(exprs.count)
        for e in exprs { out.append(try resolve(e, locals: locals, scope: scope)) }
        return out
    }

    func resolve(_ expr: Expr, locals: Set<String>, scope: Scope) throws(RulesError) -> Expr {
        switch expr.kind {
        case .null, .bool, .int, .float, .string, .bytes, .local, .wildcard, .request, .resource:
            return expr
        case .identifier(let name):
            if locals.contains(name) { return expr.with(.local(name)) }
            if let depth = wildcardDepth(name, in: scope) { return expr.with(.wildcard(name, depth: depth)) }
            if name == "request" { return expr.with(.request) }
            if name == "resource" { return expr.with(.resource) }
            if Builtin.namespaces.contains(name) {
                throw error("'\(name)' is a namespace of functions (\(name).…(…)), not a value", at: expr.offset)
            }
            throw error("unknown name '\(name)': not a parameter, let, wildcard, request or resource", at: expr.offset)
        case .call(let name, let args):
            let resolved = try resolveAll(args, locals: locals, scope: scope)
            if let index = function(name, in: scope) {
                let params = functions[index].params.count
                guard params == args.count else {
                    throw error("function '\(name)' takes \(params) argument\(params == 1 ? "" : "s"), not \(args.count)", at: expr.offset)
                }
                return expr.with(.userCall(index, resolved))
            }
            if let builtin = Builtin(rawValue: name), !name.contains(".") {
                try checkArity(builtin, args.count, at: expr.offset)
                return expr.with(.builtin(builtin, resolved))
            }
            throw error("unknown function '\(name)'", at: expr.offset)
        case .method(let receiver, let name, let args):
            let resolved = try resolveAll(args, locals: locals, scope: scope)
            if let namespace = isNamespace(receiver, locals: locals, scope: scope) {
                guard let builtin = Builtin(rawValue: namespace + "." + name) else {
                    throw error("unknown function '\(namespace).\(name)'", at: expr.offset)
                }
                try checkArity(builtin, args.count, at: expr.offset)
                return expr.with(.builtin(builtin, resolved))
            }
            guard knownMethods.contains(name) else {
                throw error("unknown method '.\(name)()': no rules type has it", at: expr.offset)
            }
            return expr.with(.method(try resolve(receiver, locals: locals, scope: scope), name, resolved))
        case .member(let receiver, let name):
            if let namespace = isNamespace(receiver, locals: locals, scope: scope) {
                throw error("'\(namespace).\(name)' is not a value: call it as \(namespace).\(name)(…)", at: expr.offset)
            }
            return expr.with(.member(try resolve(receiver, locals: locals, scope: scope), name))
        case .index(let receiver, let index):
            return expr.with(.index(try resolve(receiver, locals: locals, scope: scope), try resolve(index, locals: locals, scope: scope)))
        case .slice(let receiver, let start, let end):
            return expr.with(.slice(
                try resolve(receiver, locals: locals, scope: scope),
                try start.map { e throws(RulesError) in try resolve(e, locals: locals, scope: scope) },
                try end.map { e throws(RulesError) in try resolve(e, locals: locals, scope: scope) }))
        case .list(let items):
            return expr.with(.list(try resolveAll(items, locals: locals, scope: scope)))
        case .map(let entries):
            var out: [MapEntry] = []
            for e in entries { out.append(MapEntry(key: e.key, value: try resolve(e.value, locals: locals, scope: scope))) }
            return expr.with(.map(out))
        case .path(let parts):
            var out: [PathPart] = []
            for p in parts {
                switch p {
                case .literal: out.append(p)
                case .interpolated(let e): out.append(.interpolated(try resolve(e, locals: locals, scope: scope)))
                }
            }
            return expr.with(.path(out))
        case .unary(let op, let operand):
            return expr.with(.unary(op, try resolve(operand, locals: locals, scope: scope)))
        case .binary(let op, let l, let r):
            return expr.with(.binary(op, try resolve(l, locals: locals, scope: scope), try resolve(r, locals: locals, scope: scope)))
        case .and(let terms):
            return expr.with(.and(try resolveAll(terms, locals: locals, scope: scope)))
        case .or(let terms):
            return expr.with(.or(try resolveAll(terms, locals: locals, scope: scope)))
        case .conditional(let c, let t, let f):
            return expr.with(.conditional(try resolve(c, locals: locals, scope: scope), try resolve(t, locals: locals, scope: scope),
                                          try resolve(f, locals: locals, scope: scope)))
        case .isType(let e, let type):
            return expr.with(.isType(try resolve(e, locals: locals, scope: scope), type))
        case .userCall(let index, let args):
            return expr.with(.userCall(index, try resolveAll(args, locals: locals, scope: scope)))
        case .builtin(let b, let args):
            return expr.with(.builtin(b, try resolveAll(args, locals: locals, scope: scope)))
        }
    }

    private func checkArity(_ builtin: Builtin, _ count: Int, at offset: Int) throws(RulesError) {
        guard builtin.arity.contains(count) else {
            let n = builtin.arity.lowerBound == builtin.arity.upperBound ? "\(builtin.arity.lowerBound)" : "\(builtin.arity)"
            throw error("\(builtin.rawValue)() takes \(n) argument\(n == "1" ? "" : "s"), not \(count)", at: offset)
        }
    }
}
