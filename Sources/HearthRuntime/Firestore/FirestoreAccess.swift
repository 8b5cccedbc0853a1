import Foundation
import Synchronization
import HearthModel
import HearthRules
import HearthStore

/// Whether a REST caller may read or write documents: the admin token may do anything; a client
/// may do what `firestore.rules` allows (`Ruleset`), and nothing when no rules are configured
/// (Firestore's locked mode). A denial answers Firestore's "Missing or insufficient permissions."
/// and logs, at info, which rule refused and why.
struct FirestoreAccess: Sendable {
    /// How many other documents the rules may read with `get()`/`exists()` while deciding one
    /// request: 10 for a single-document request or a query, 20 for several documents at once
    /// (batchGet, commits with several writes, transactions), Firebase's limits.
    enum Reads: Sendable {
        case single, multiple

        var limit: Int { self == .single ? DocumentAccess.singleDocumentLimit : DocumentAccess.multiDocumentLimit }
    }

    /// What a request does to one document (or, for `list`, which documents it asks for).
    enum Action: Sendable {
        case get(DocumentPath, StoredDocument?)
        case list(QuerySpec, offset: Int)
        case create(DocumentPath, after: [String: Value])
        case update(DocumentPath, before: StoredDocument, after: [String: Value])
        case delete(DocumentPath, before: StoredDocument?)

        var path: String {
            switch self {
            case .get(let p, _), .create(let p, _), .update(let p, _, _), .delete(let p, _): return p.description
            case .list(let spec, _): return spec.scopeDescription
            }
        }

        /// The document as the action leaves it (`getAfter`): nil for a read or a delete.
        var written: (DocumentPath, [String: Value]?)? {
            switch self {
            case .create(let p, let after), .update(let p, _, let after): return (p, after)
            case .delete(let p, _): return (p, nil)
            case .get, .list: return nil
            }
        }
    }

    static let denied = "Missing or insufficient permissions."

    /// The rules in force: those of `[firestore] rules`, or the last set by the emulator's
    /// `PUT …:securityRules` (kept in memory; a restart reads the file again).
    let rules: RulesInForce
    let clock: any Clock
    /// Reads a document now, on the caller's thread, for `get()` and `exists()` in rules.
    let read: @Sendable (DocumentPath) throws -> StoredDocument?
    let log: RuntimeLog

    /// Loads `[firestore] rules`; a file that does not parse is a configuration error naming
    /// file:line:column.
    static func load(_ config: RuntimeConfig) throws -> Ruleset? {
        guard let file = config.firestore.rules else { return nil }
        let path = config.resolve(file)
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw ConfigError("firestore.rules: cannot read \(path)")
        }
        do { return try Ruleset(source: text, fileName: path) } catch { throw ConfigError("\(error)") }
    }

    /// The documents the rules read with `get()`/`exists()` while deciding, as they were: a
    /// commit validates them, so a change to one between the decision and the commit (a role
    /// revoked) makes the commit conflict and the decision run again.
    final class ReadLog {
        var documents: [DocumentPath: Timestamp?] = [:]
        var validations: [ReadValidation] { documents.map { .document($0.key, updateTime: $0.value) } }
    }

    /// Checks every action of one request (the documents of a batchGet, the writes of a commit)
    /// with one budget of document reads; the first denial refuses the whole request. Returns
    /// what the rules read, for the commit to validate.
    @discardableResult
    func authorize(_ caller: FirestoreCaller, _ actions: [Action], reads: Reads, at time: Timestamp? = nil) throws(HTTPSError) -> [ReadValidation] {
        guard case .client(let signedIn) = caller, !actions.isEmpty else { return [] }
        guard let rules = rules.current else {
            throw HTTPSError(.permissionDenied, "\(FirestoreAccess.denied) No security rules are configured ([firestore] rules in runtime.toml), so clients may not read or write \(actions[0].path).")
        }
        let auth = signedIn.map { RulesAuth(uid: $0.uid, token: $0.claims) }
        let now = time ?? clock.now()
        var after: [DocumentPath: [String: Value]?] = [:]
        for case let (path, fields)? in actions.map(\.written) { after[path] = .some(fields) }
        let readNow = self.read
        let log = ReadLog()
        let read = { (path: DocumentPath) throws -> [String: Value]? in
            let doc = try readNow(path)
            if log.documents[path] == nil { log.documents[path] = .some(doc?.updateTime) }
            return doc?.fields
        }
        let documents = DocumentAccess(limit: reads.limit, read: read,
                                       readAfter: after.isEmpty ? nil : { path in
                                           if let written = after[path] { return written }
                                           return try read(path)
                                       })
        for action in actions {
            let request: RulesRequest
            switch action {
            case .get(let path, let doc): request = .get(path, existing: doc?.fields, auth: auth, time: now)
            case .list(let spec, let offset): request = .list(spec, offset: offset, auth: auth, time: now)
            case .create(let path, let fields): request = .create(path, data: fields, auth: auth, time: now)
            case .update(let path, let before, let fields): request = .update(path, existing: before.fields, after: fields, auth: auth, time: now)
            case .delete(let path, let before): request = .delete(path, existing: before?.fields, auth: auth, time: now)
            }
            let decision = rules.authorize(request, documents: documents)
            if !decision.isAllowed {
                self.log.info("firestore request denied by rules", ["uid": signedIn.map { .string($0.uid) } ?? .null, "decision": .string(decision.description)])
                throw HTTPSError(.permissionDenied, FirestoreAccess.denied)
            }
        }
        return log.validations
    }

    @discardableResult
    func authorize(_ caller: FirestoreCaller, _ action: Action, reads: Reads) throws(HTTPSError) -> [ReadValidation] {
        try authorize(caller, [action], reads: reads)
    }
}

/// The Firestore rules in force, which the emulator's `PUT …:securityRules` may replace.
final class RulesInForce: Sendable {
    private let rules: Mutex<Ruleset?>

    init(_ rules: Ruleset?) { self.rules = Mutex(rules) }

    var current: Ruleset? { rules.withLock { $0 } }
    func replace(with new: Ruleset) { rules.withLock { $0 = new } }
}
