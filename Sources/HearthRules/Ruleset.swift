import HearthModel

/// A loaded `firestore.rules` file, ready to authorize requests; immutable and Sendable, so one
/// value serves every request of the front door.
///
/// ```swift
/// let rules = try Ruleset(source: text, fileName: "firestore.rules")
/// let access = DocumentAccess(read: { path in try store.get(path)?.fields })
/// let decision = rules.authorize(.get(path, existing: doc, auth: auth, time: now), documents: access)
/// guard decision.isAllowed else { /* PERMISSION_DENIED; log decision.description */ }
/// ```
///
/// A request is matched against every `match` block (nested paths concatenated below
/// `/databases/{database}/documents`); an `allow` for the request's method (`read` = get + list,
/// `write` = create + update + delete) in any block whose path matches permits it if its condition
/// is true. No such allow, or none true: denied. An evaluation error (a missing field, a null, a
/// type mismatch) makes its allow false unless `&&`/`||` decide without it; a limit (documents
/// read, evaluation steps) denies the request outright.
///
/// List queries: the rules must hold for every document the query could return, never per
/// document ("rules are not filters"). The collection's document id and anything the query's
/// filters do not fix are unknown, and a condition that is not true whatever they are denies
/// (`QueryFacts` says what the filters fix). A collection-group query needs a block whose path
/// has the recursive wildcard before the collection: `match /{path=**}/items/{item}`.
public struct Ruleset: Sendable {
    public let fileName: String
    let sourceMap: SourceMap
    let functions: [CompiledFunction]
    let matches: [CompiledMatch]
    let databaseWildcard: String
    /// For each method, the blocks with an allow for it, in file order.
    let blocksByMethod: [RulesMethod: [Int]]
    /// Where `debug(value)` writes each value it is given, with its file:line:column (as the
    /// emulator writes them to its debug log); nil drops them, as production Firebase does.
    public var debugLog: (@Sendable (String) -> Void)?

    /// Parses and checks a rules file; errors carry `file:line:column`.
    public init(source: String, fileName: String = "firestore.rules") throws(RulesError) {
        var parser = Parser(source, fileName: fileName)
        let file = try parser.parseFile()
        var compiler = Compiler(sourceMap: parser.lexer.sourceMap)
        try compiler.compile(file)
        self.fileName = fileName
        sourceMap = parser.lexer.sourceMap
        functions = compiler.functions
        let blocks = compiler.matches
        matches = blocks
        databaseWildcard = file.databaseWildcard
        var byMethod: [RulesMethod: [Int]] = [:]
        for method in RulesMethod.allCases {
            byMethod[method] = blocks.indices.filter { i in blocks[i].allows.contains { $0.methods.contains(method) } }
        }
        blocksByMethod = byMethod
    }

    /// Authorizes a request when the rules may not read other documents (`get()` denies).
    public func authorize(_ request: RulesRequest) -> RulesDecision {
        authorize(request, documents: .unavailable())
    }

    /// Authorizes one request. `documents` serves `get()`/`exists()`; share one across the
    /// writes of a batch or transaction (with `DocumentAccess.multiDocumentLimit`) so the
    /// limit counts them together.
    public func authorize(_ request: RulesRequest, documents: DocumentAccess) -> RulesDecision {
        let database = request.database
        let prefix = RulesValue.documentsPrefix(database)
        let subject: [PathItem]
        let resource: RulesValue
        let requestPath: RulesValue
        var requestResource = RulesValue.null
        var query = RulesValue.null
        var facts: QueryFacts?
        var own: (path: DocumentPath, data: [String: Value]?)?

        switch request.target {
        case .document(let path):
            guard request.method != .list else { return deny(request, .aborted("a list must be authorized with its query (RulesRequest.list)")) }
            subject = path.segments.map(PathItem.segment)
            resource = request.existing.map { Evaluation.resourceValue(path, $0, database: database) } ?? .null
            requestPath = .path(prefix + path.segments)
            if let incoming = request.incoming, request.method == .create || request.method == .update {
                requestResource = Evaluation.resourceValue(path, incoming, database: database)
            }
            own = (path, request.method == .delete ? nil : (request.incoming ?? request.existing))
        case .query(let spec, let offset):
            guard request.method == .list else { return deny(request, .aborted("a query target is only for the list method")) }
            let parent = (spec.parent?.segments ?? []).map(PathItem.segment)
            // A kindless query's collections have any id, so rules must allow every one.
            subject = parent + (spec.allDescendants ? [.unknownRun] : []) + [spec.isKindless ? .unknownID : .segment(spec.collectionID), .unknownID]
            resource = .map([
                "data": .field(FieldPath(segments: [])),
                "id": .unknown("the id of a document the query returns"),
                "__name__": .unknown("the name of a document the query returns"),
            ])
            // A collection's query is a request on the collection's path, as Firebase gives it
            // (`request.path[3] == 'docs'` for a query on docs); a collection group's has no one path.
            if !spec.allDescendants && !spec.isKindless {
                requestPath = .path(prefix + (spec.parent?.segments ?? []) + [spec.collectionID])
            } else {
                requestPath = .unknown("request.path of a collection group query")
            }
            var orderBy: [String: RulesValue] = [:]
            for o in spec.orderBy { orderBy[o.field.description] = .string(o.direction == .ascending ? "ASC" : "DESC") }
            query = .map([
                "limit": spec.limit.map { .int(Int64($0)) } ?? .null,
                // 0 when the query has none, as Firebase evaluates it (`request.query.offset == 0`).
                "offset": .int(Int64(offset ?? 0)),
                "orderBy": .map(orderBy),
            ])
            facts = QueryFacts(spec)
        }

        var requestFields: [String: RulesValue] = [
            "auth": request.auth.map { auth in
                .map(["uid": .string(auth.uid), "token": .map(auth.token, database: database)])
            } ?? .null,
            "method": .string(request.method.rawValue),
            "path": requestPath,
            "time": .timestamp(request.time),
        ]
        // A list's query; a get or a write has none, and reading it is an error, as on Firebase.
        if request.method == .list { requestFields["query"] = query }
        // The incoming document on a create or update, null on a delete; a read has none, and
        // reading it is an error (as Firebase's emulator evaluates `request.resource == null`).
        if request.method != .get && request.method != .list { requestFields["resource"] = requestResource }
        let requestValue = RulesValue.map(requestFields)
        var located: (@Sendable (String, Int) -> Void)?
        if let log = debugLog {
            let map = sourceMap
            located = { message, offset in log("\(message) at \(map.location(offset))") }
        }
        let evaluation = Evaluation(functions: functions, request: requestValue, resource: resource, database: database,
                                    access: documents, own: own, facts: facts, debugLog: located)
        let databaseBinding = Binding(depth: 0, name: databaseWildcard, value: .string(database))

        var attempts: [RulesAttempt] = []
        for index in blocksByMethod[request.method] ?? [] {
            let block = matches[index]
            guard let bindings = Ruleset.match(block, subject) else { continue }
            evaluation.bindings = [databaseBinding] + bindings
            for allow in block.allows where allow.methods.contains(request.method) {
                let location = sourceMap.location(allow.offset)
                guard let condition = allow.condition else { return .allowed(by: location) }
                do {
                    switch try evaluation.truth(condition, Frame()) {
                    case .yes: return .allowed(by: location)
                    case .no: attempts.append(RulesAttempt(allow: location, outcome: .falseCondition))
                    case .unknown(let why): attempts.append(RulesAttempt(allow: location, outcome: .notProvable(why)))
                    }
                } catch {
                    let at = sourceMap.location(error.offset)
                    if error.kind == .abort { return deny(request, .aborted("\(error.message) (at \(at))")) }
                    attempts.append(RulesAttempt(allow: location, outcome: .error(error.message, at: at)))
                }
            }
        }
        return deny(request, attempts.isEmpty ? .noMatchingAllow : .conditionsFailed(attempts))
    }

    private func deny(_ request: RulesRequest, _ reason: RulesDenial.Reason) -> RulesDecision {
        .denied(RulesDenial(method: request.method, path: request.pathDescription, reason: reason))
    }

    // MARK: Matching paths

    /// One segment of the path being matched: known, the unknown id of a queried document, or
    /// (collection groups) any number of unknown segments.
    enum PathItem {
        case segment(String)
        case unknownID
        case unknownRun
    }

    /// The wildcard bindings when the block's path matches the whole subject, nil otherwise. A
    /// literal never matches an unknown item and a single wildcard never matches a run, so a
    /// block matches a query only when it covers every document the query can return.
    static func match(_ block: CompiledMatch, _ subject: [PathItem]) -> [Binding]? {
        let pattern = block.pattern
        var bindings: [Binding] = []
        func bind(_ p: Int, _ item: PathItem) -> Bool {
            switch (pattern[p], item) {
            case (.literal(let l), .segment(let s)): return UTF8Key.equal(l, s)  // bytes, as Firestore matches paths
            case (.single(let name), .segment(let s)):
                bindings.append(Binding(depth: block.depths[p], name: name, value: .string(s)))
                return true
            case (.single(let name), .unknownID):
                bindings.append(Binding(depth: block.depths[p], name: name, value: .unknown("{\(name)} is any id on the path of a document the query returns")))
                return true
            default:
                return false
            }
        }
        guard let k = pattern.firstIndex(where: { if case .recursive = $0 { return true } else { return false } }) else {
            guard pattern.count == subject.count else { return nil }
            for i in pattern.indices where !bind(i, subject[i]) { return nil }
            return bindings
        }
        let suffixCount = pattern.count - k - 1
        guard subject.count >= k + suffixCount else { return nil }
        for i in 0..<k where !bind(i, subject[i]) { return nil }
        let suffixStart = subject.count - suffixCount
        for j in 0..<suffixCount where !bind(k + 1 + j, subject[suffixStart + j]) { return nil }
        var segments: [String] = []
        var known = true
        for item in subject[k..<suffixStart] {
            if case .segment(let s) = item { segments.append(s) } else { known = false }
        }
        guard case .recursive(let name) = pattern[k] else { return nil }
        let value: RulesValue = known ? .path(segments) : .unknown("the path {\(name)=**} matches for a document the query returns")
        bindings.append(Binding(depth: block.depths[k], name: name, value: value))
        return bindings
    }
}
