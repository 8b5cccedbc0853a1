import HearthModel

/// The signed-in user as the rules see it (`request.auth`): the uid and the ID token's claims
/// (`email`, `email_verified`, `firebase.sign_in_provider`, custom claims…), as the front door
/// verified them. A signed-out request has no `RulesAuth` (`request.auth == null`).
public struct RulesAuth: Sendable, Hashable {
    public var uid: String
    public var token: [String: Value]

    public init(uid: String, token: [String: Value] = [:]) {
        self.uid = uid
        self.token = token
    }
}

/// One operation to authorize, with everything the rules may read about it. Build it with the
/// static constructors (`get`, `list`, `create`, `update`, `delete`), which say what each needs.
public struct RulesRequest: Sendable {
    public enum Target: Sendable {
        case document(DocumentPath)
        /// A list: every document the query could return must pass.
        case query(QuerySpec, offset: Int?)
    }

    public var method: RulesMethod
    public var target: Target
    public var auth: RulesAuth?
    /// `request.time`: when the request arrived (the runtime's clock, not the client's).
    public var time: Timestamp
    /// The stored document (`resource.data`); nil when it does not exist.
    public var existing: [String: Value]?
    /// The document as it would be after the write (`request.resource.data`) for create and update.
    public var incoming: [String: Value]?
    /// The database name `{database}` binds to and document names use.
    public var database: String

    public init(method: RulesMethod, target: Target, auth: RulesAuth?, time: Timestamp,
                existing: [String: Value]? = nil, incoming: [String: Value]? = nil, database: String = "(default)") {
        self.method = method
        self.target = target
        self.auth = auth
        self.time = time
        self.existing = existing
        self.incoming = incoming
        self.database = database
    }

    /// Reading one document; `existing` is the stored document or nil (rules may allow reading a
    /// missing document, and may also depend on it being there).
    public static func get(_ path: DocumentPath, existing: [String: Value]?, auth: RulesAuth?, time: Timestamp) -> RulesRequest {
        RulesRequest(method: .get, target: .document(path), auth: auth, time: time, existing: existing)
    }

    /// A query (or a listing of a collection, which is a query without filters). The rules are
    /// checked once for the query, not per result: see `Ruleset` on how list rules are proved.
    public static func list(_ query: QuerySpec, offset: Int? = nil, auth: RulesAuth?, time: Timestamp) -> RulesRequest {
        RulesRequest(method: .list, target: .query(query, offset: offset), auth: auth, time: time)
    }

    /// Creating a document with `data`.
    public static func create(_ path: DocumentPath, data: [String: Value], auth: RulesAuth?, time: Timestamp) -> RulesRequest {
        RulesRequest(method: .create, target: .document(path), auth: auth, time: time, existing: nil, incoming: data)
    }

    /// Updating a document: `existing` as stored, `after` the whole document once the update
    /// (merges, transforms) is applied, as Firestore's `request.resource` is.
    public static func update(_ path: DocumentPath, existing: [String: Value]?, after: [String: Value], auth: RulesAuth?, time: Timestamp) -> RulesRequest {
        RulesRequest(method: .update, target: .document(path), auth: auth, time: time, existing: existing, incoming: after)
    }

    /// Deleting a document (`existing` nil when there is none).
    public static func delete(_ path: DocumentPath, existing: [String: Value]?, auth: RulesAuth?, time: Timestamp) -> RulesRequest {
        RulesRequest(method: .delete, target: .document(path), auth: auth, time: time, existing: existing)
    }

    /// The path for messages: the document, or the collection (group) queried.
    var pathDescription: String {
        switch target {
        case .document(let p): return p.description
        case .query(let q, _): return q.scopeDescription
        }
    }
}

/// The answer for one request.
public enum RulesDecision: Sendable, Equatable, CustomStringConvertible {
    /// The `allow` statement whose condition held.
    case allowed(by: SourceLocation)
    case denied(RulesDenial)

    public var isAllowed: Bool {
        if case .allowed = self { return true }
        return false
    }

    public var denial: RulesDenial? {
        if case .denied(let d) = self { return d }
        return nil
    }

    public var description: String {
        switch self {
        case .allowed(let location): return "allowed by the allow at \(location)"
        case .denied(let d): return d.description
        }
    }
}

/// Why a request was denied, for the developer (the client gets only PERMISSION_DENIED).
public struct RulesDenial: Sendable, Equatable, CustomStringConvertible {
    public enum Reason: Sendable, Equatable {
        /// No `allow` for the method sits in a match block whose path matches.
        case noMatchingAllow
        /// Allows matched; none held. One attempt per allow, in file order.
        case conditionsFailed([RulesAttempt])
        /// A limit stopped evaluation (document reads, evaluation steps) or a read failed:
        /// Firebase denies the whole request then, whatever other allows say.
        case aborted(String)
    }

    public var method: RulesMethod
    public var path: String
    public var reason: Reason

    public var description: String {
        let head = "denied \(method) on \(path)"
        switch reason {
        case .noMatchingAllow:
            return "\(head): no allow \(method) statement matches this path (default deny)"
        case .conditionsFailed(let attempts):
            return "\(head): " + attempts.map(\.description).joined(separator: "; ")
        case .aborted(let why):
            return "\(head): \(why)"
        }
    }
}

/// One `allow` statement tried and what came of it.
public struct RulesAttempt: Sendable, Equatable, CustomStringConvertible {
    public enum Outcome: Sendable, Equatable {
        /// The condition evaluated to false.
        case falseCondition
        /// Evaluation failed (a missing field, a null, a wrong type…): an error denies.
        case error(String, at: SourceLocation)
        /// A list query: the condition does not hold for every document the query could return.
        case notProvable(String)
    }

    /// Where the `allow` is.
    public var allow: SourceLocation
    public var outcome: Outcome

    public var description: String {
        switch outcome {
        case .falseCondition: return "allow at \(allow): condition is false"
        case .error(let message, let at): return "allow at \(allow): error at \(at): \(message)"
        case .notProvable(let why): return "allow at \(allow): not proved for every document the query can return (\(why))"
        }
    }
}
