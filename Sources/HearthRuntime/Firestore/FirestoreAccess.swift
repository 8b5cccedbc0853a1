import HearthModel
import HearthStore

/// Whether a REST caller may read or write a document: the admin token may do anything; a
/// client may do what `firestore.rules` allows, and nothing when no rules are configured
/// (Firestore's locked mode).
struct FirestoreAccess: Sendable {
    /// How many other documents the rules may read with `get()`/`exists()` while deciding one
    /// request: 10 for a single-document request or a query, 20 for several documents at once
    /// (batchGet, commits with several writes, transactions), Firebase's limits.
    enum Reads: Sendable {
        case single, multiple

        var limit: Int { self == .single ? 10 : 20 }
    }

    /// What a request does to one document (or, for `list`, which documents it asks for).
    enum Action: Sendable {
        case get(DocumentPath, StoredDocument?)
        case list(QuerySpec)
        case create(DocumentPath, after: [String: Value])
        case update(DocumentPath, before: StoredDocument, after: [String: Value])
        case delete(DocumentPath, before: StoredDocument?)

        /// The action a write is, over the document as it is now.
        init(_ write: DocumentWrite, existing: StoredDocument?, at time: Timestamp) throws(HTTPSError) {
            if case .delete = write.operation {
                self = .delete(write.path, before: existing)
                return
            }
            let after = try DocumentStore.preview(write, over: existing, at: time) ?? [:]
            if let existing { self = .update(write.path, before: existing, after: after) } else { self = .create(write.path, after: after) }
        }

        var path: String {
            switch self {
            case .get(let p, _), .create(let p, _), .update(let p, _, _), .delete(let p, _): return p.description
            case .list(let spec): return spec.collectionPath?.description ?? "collection group '\(spec.collectionID)'"
            }
        }
    }

    static let denied = "Missing or insufficient permissions."

    func authorize(_ caller: FirestoreCaller, _ action: Action, reads: Reads) async throws {
        guard case .client = caller else { return }
        throw HTTPSError(.permissionDenied, "\(FirestoreAccess.denied) No security rules are configured ([firestore] rules in runtime.toml), so clients may not read or write \(action.path).")
    }
}
