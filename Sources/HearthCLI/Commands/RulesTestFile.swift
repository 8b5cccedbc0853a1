import Foundation
import HearthModel
import HearthRules
import HearthRuntime

/// A `hearth rules test` file, read and checked: the rules, the stored documents and the cases
/// as ready requests. Every problem is a `UsageError` naming the case and the key, and keys
/// nobody reads are refused so a typo (`"exepct"`) is not a silent pass.
struct RulesTestFile {
    struct Case {
        var name: String
        var request: RulesRequest
        var expectAllow: Bool
    }

    var rules: Ruleset
    var documents: [DocumentPath: [String: Value]]
    var cases: [Case]

    /// A fresh reader of the file's documents for one case (Firebase's single-request limit).
    func access() -> DocumentAccess {
        let docs = documents
        return DocumentAccess(read: { docs[$0] })
    }

    static func load(_ file: String, io: CommandIO, now: Timestamp) throws(UsageError) -> RulesTestFile {
        guard let data = io.readFile(file) else { throw UsageError("cannot read \(file)") }
        guard let text = String(validating: [UInt8](data), as: UTF8.self) else { throw UsageError("\(file): not valid UTF-8") }
        let root: Value
        do {
            if file.hasSuffix(".toml") {
                // TOML through JSON, so that the tagged forms ({"$timestamp" = "…"}) read alike.
                let plain = try RuntimeConfig.json(parsingTOML: text)
                root = try JSONParser.parse(JSONWriter.string(plain), options: .clientBody)
            } else {
                root = try JSONParser.parse(text, options: .clientBody)
            }
        } catch {
            throw UsageError("\(file): \(error)")
        }
        guard case .map(let top) = root else { throw UsageError("\(file): the top level must be an object") }
        try checkKeys(top, ["rules", "time", "documents", "cases"], "\(file)")

        guard case .string(let rulesName)? = top["rules"] else { throw UsageError("\(file): \"rules\" must name the rules file") }
        let base = URL(fileURLWithPath: file).deletingLastPathComponent()
        let rulesPath = rulesName.hasPrefix("/") ? rulesName : base.appendingPathComponent(rulesName).path
        guard let rulesData = io.readFile(rulesPath), let rulesText = String(validating: [UInt8](rulesData), as: UTF8.self) else {
            throw UsageError("cannot read the rules file \(rulesPath)")
        }
        let rules: Ruleset
        do { rules = try Ruleset(source: rulesText, fileName: rulesName) } catch { throw UsageError("\(error)") }

        let defaultTime = try time(top["time"], "\(file): \"time\"") ?? now

        var documents: [DocumentPath: [String: Value]] = [:]
        if let docs = top["documents"] {
            guard case .map(let entries) = docs else { throw UsageError("\(file): \"documents\" must map paths to documents") }
            for (key, value) in entries {
                let path: DocumentPath
                do { path = try DocumentPath(key) } catch { throw UsageError("\(file): documents: \(error.message)") }
                guard case .map(let fields) = value else { throw UsageError("\(file): documents: \(key) must be an object") }
                documents[path] = fields
            }
        }

        guard case .array(let list)? = top["cases"] else { throw UsageError("\(file): \"cases\" must be a list") }
        var cases: [Case] = []
        for (i, item) in list.enumerated() {
            cases.append(try parseCase(item, index: i, documents: documents, defaultTime: defaultTime, file: file))
        }
        return RulesTestFile(rules: rules, documents: documents, cases: cases)
    }

    static func checkKeys(_ map: [String: Value], _ allowed: Set<String>, _ context: String) throws(UsageError) {
        if let unknown = map.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw UsageError("\(context): unknown key \"\(unknown)\" (expected \(allowed.sorted().joined(separator: ", ")))")
        }
    }

    static func time(_ value: Value?, _ context: String) throws(UsageError) -> Timestamp? {
        switch value {
        case nil: return nil
        case .timestamp(let t)?: return t
        case .string(let s)?:
            guard let t = Timestamp(rfc3339: s) else { throw UsageError("\(context): '\(s)' is not an RFC 3339 time") }
            return t
        default: throw UsageError("\(context) must be an RFC 3339 string")
        }
    }

    static func parseCase(_ item: Value, index: Int, documents: [DocumentPath: [String: Value]], defaultTime: Timestamp,
                          file: String) throws(UsageError) -> Case {
        guard case .map(let c) = item else { throw UsageError("\(file): case \(index + 1) must be an object") }
        let name = c["name"]?.stringValue ?? "case \(index + 1)"
        let context = "\(file): case \"\(name)\""
        try checkKeys(c, ["name", "auth", "method", "path", "data", "query", "expect", "time"], context)

        let expectAllow: Bool
        switch c["expect"] {
        case .string("allow")?: expectAllow = true
        case .string("deny")?: expectAllow = false
        default: throw UsageError("\(context): \"expect\" must be \"allow\" or \"deny\"")
        }
        guard case .string(let methodName)? = c["method"], let method = RulesMethod(rawValue: methodName) else {
            throw UsageError("\(context): \"method\" must be one of get, list, create, update, delete")
        }
        guard case .string(let pathText)? = c["path"] else { throw UsageError("\(context): \"path\" is required") }
        let auth = try parseAuth(c["auth"], context)
        let time = try self.time(c["time"], "\(context): \"time\"") ?? defaultTime
        if method != .create && method != .update && c["data"] != nil {
            throw UsageError("\(context): \"data\" goes with create and update")
        }
        if method != .list && c["query"] != nil { throw UsageError("\(context): \"query\" goes with list") }

        if method == .list {
            return Case(name: name, request: .list(try parseQuery(c["query"], collection: pathText, context), auth: auth, time: time),
                        expectAllow: expectAllow)
        }
        let path: DocumentPath
        do { path = try DocumentPath(pathText) } catch { throw UsageError("\(context): \(error.message)") }
        let existing = documents[path]
        let request: RulesRequest
        switch method {
        case .get: request = .get(path, existing: existing, auth: auth, time: time)
        case .delete: request = .delete(path, existing: existing, auth: auth, time: time)
        case .create, .update:
            guard case .map(let data)? = c["data"] else { throw UsageError("\(context): \(method) needs \"data\" (an object)") }
            if method == .create {
                request = .create(path, data: data, auth: auth, time: time)
            } else {
                request = .update(path, existing: existing, after: (existing ?? [:]).merging(data) { $1 }, auth: auth, time: time)
            }
        case .list:
            throw UsageError("\(context): unreachable")
        }
        return Case(name: name, request: request, expectAllow: expectAllow)
    }

    static func parseAuth(_ value: Value?, _ context: String) throws(UsageError) -> RulesAuth? {
        switch value {
        case nil, .null?: return nil
        case .map(let m)?:
            try checkKeys(m, ["uid", "token"], "\(context): auth")
            guard case .string(let uid)? = m["uid"], !uid.isEmpty else { throw UsageError("\(context): auth needs a \"uid\"") }
            var token: [String: Value] = [:]
            if let t = m["token"] {
                guard case .map(let claims) = t else { throw UsageError("\(context): auth.token must be an object of claims") }
                token = claims
            }
            // As in an ID token: the uid is also the token's sub and user_id unless the case says otherwise.
            if token["sub"] == nil { token["sub"] = .string(uid) }
            if token["user_id"] == nil { token["user_id"] = .string(uid) }
            return RulesAuth(uid: uid, token: token)
        default:
            throw UsageError("\(context): \"auth\" must be null or {\"uid\": …, \"token\": {…}}")
        }
    }

    static func parseQuery(_ value: Value?, collection pathText: String, _ context: String) throws(UsageError) -> QuerySpec {
        let collection: CollectionPath
        do { collection = try CollectionPath(pathText) } catch { throw UsageError("\(context): a list's path is a collection: \(error.message)") }
        var spec = QuerySpec(collection: collection)
        guard let value else { return spec }
        guard case .map(let q) = value else { throw UsageError("\(context): \"query\" must be an object") }
        try checkKeys(q, ["where", "orderBy", "limit", "collectionGroup"], "\(context): query")
        if case .bool(true)? = q["collectionGroup"] { spec.allDescendants = true }
        if let w = q["where"] {
            guard case .array(let clauses) = w else { throw UsageError("\(context): query.where must be a list of [field, op, value]") }
            for clause in clauses {
                guard case .array(let parts) = clause, parts.count == 3, case .string(let fieldText) = parts[0],
                      case .string(let opText) = parts[1] else {
                    throw UsageError("\(context): each where clause is [\"field\", \"op\", value]")
                }
                guard let op = QuerySpec.Operator(rawValue: opText) else {
                    throw UsageError("\(context): unknown operator '\(opText)' (\(QuerySpec.Operator.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                let field: FieldPath
                do { field = try FieldPath(fieldText) } catch { throw UsageError("\(context): \(error.message)") }
                spec.filters.append(QuerySpec.Filter(field, op, parts[2]))
            }
        }
        if let o = q["orderBy"] {
            guard case .array(let orders) = o else { throw UsageError("\(context): query.orderBy must be a list") }
            for order in orders {
                let parts: [Value]
                if case .array(let a) = order { parts = a } else { parts = [order] }
                guard let first = parts.first, case .string(let fieldText) = first, parts.count <= 2 else {
                    throw UsageError("\(context): each orderBy is \"field\" or [\"field\", \"asc\"|\"desc\"]")
                }
                var direction = QuerySpec.Direction.ascending
                if parts.count == 2 {
                    guard case .string(let d) = parts[1], let parsed = QuerySpec.Direction(rawValue: d) else {
                        throw UsageError("\(context): orderBy direction must be \"asc\" or \"desc\"")
                    }
                    direction = parsed
                }
                do { spec.orderBy.append(QuerySpec.Order(try FieldPath(fieldText), direction)) } catch {
                    throw UsageError("\(context): \(error.message)")
                }
            }
        }
        if let l = q["limit"] {
            guard case .int(let n) = l, n >= 0, let limit = Int(exactly: n) else { throw UsageError("\(context): query.limit must be a non-negative integer") }
            spec.limit = limit
        }
        do { try spec.validate() } catch { throw UsageError("\(context): \(error.message)") }
        return spec
    }
}
