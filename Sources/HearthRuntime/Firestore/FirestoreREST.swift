import HearthHTTP
import HearthModel
import HearthStore
import Synchronization

/// Firestore's REST v1 API over the store, at `/v1/projects/{project}/databases/(default)/documents…`
/// (https://firebase.google.com/docs/firestore/reference/rest): get, list, createDocument, patch,
/// delete, batchGet, runQuery, runAggregationQuery, beginTransaction, commit, rollback,
/// batchWrite and listCollectionIds, in Google's JSON shapes, errors in Google's error shape.
///
/// Who may do what: a request with the admin token (or, in emulator mode, `Bearer owner`, as
/// firebase-admin sends) is trusted as the Admin SDK is and bypasses security rules; any other
/// request is a client's, signed in with `Bearer <ID token>` or not at all, and every document it
/// reads or writes is checked against `firestore.rules` (`FirestoreAccess`). Writes made here are
/// ordinary commits: they fire triggers and reach the change feed like a unit's writes, and are
/// recorded as external inputs while recording.
///
/// Listen and Write (the streaming channels) are not served.
final class FirestoreREST: Sendable {
    let runtime: Runtime
    let access: FirestoreAccess
    /// Transactions begun read-only here: commit refuses their writes.
    let readOnly = Mutex<Set<UInt64>>([])

    init(runtime: Runtime, access: FirestoreAccess) {
        self.runtime = runtime
        self.access = access
    }

    var store: DocumentStore { runtime.store }

    /// One request, parsed: who sent it, the database's names, its query parameters.
    struct Call: Sendable {
        let request: HTTPServerRequest
        let caller: FirestoreCaller
        let names: FirestoreJSON
        let parameters: [(name: String, value: String)]

        func parameter(_ name: String) -> String? { parameters.last { $0.name == name }?.value }
        func all(_ name: String) -> [String] { parameters.filter { $0.name == name }.map(\.value) }

        /// The request's JSON body (an empty body is an empty object).
        func body() throws(HTTPSError) -> [String: Value] {
            // Firestore's one bound on a request (https://cloud.google.com/firestore/quotas), in its words.
            guard request.body.count <= DocumentLimits.maxRequestBytes else { throw .invalidArgument(DocumentLimits.requestTooLarge) }
            if request.body.isEmpty || request.body.allSatisfy({ $0 == 32 || $0 == 10 || $0 == 13 || $0 == 9 }) { return [:] }
            let parsed: Value
            do { parsed = try JSONParser.parse(request.body, options: FirestoreJSON.readOptions) } catch {
                throw .invalidArgument("Invalid JSON payload received. \(error.description)")
            }
            guard case .map(let object) = parsed else { throw .invalidArgument("Invalid JSON payload received. The body must be a JSON object.") }
            return object
        }
    }

    /// The custom methods that may end a path (`…/documents:commit`, `…/documents/a/b:runQuery`).
    static let verbs: Set<String> = ["batchGet", "beginTransaction", "commit", "rollback", "runQuery", "runAggregationQuery",
                                     "batchWrite", "listCollectionIds", "listDocuments", "listen", "write", "partitionQuery"]

    // MARK: dispatch

    /// `segments` are the path's after `/v1/`: `projects/{p}/databases/{d}/documents…`.
    func handle(_ request: HTTPServerRequest, _ segments: [Substring], caller: FirestoreCaller) async -> HTTPServerResponse {
        do {
            guard segments.count >= 5, segments[0] == "projects", segments[2] == "databases" else {
                throw HTTPSError(.notFound, "no Firestore route for \(request.path)")
            }
            let project = String(segments[1])
            guard segments[3] == "(default)" else {
                throw HTTPSError(.notFound, "The database \(segments[3]) does not exist for project \(project). Hearth serves the (default) database only.")
            }
            var rest = segments.dropFirst(4).map(String.init)
            var verb: String?
            // On bytes: an id ending in a prepended mark (U+0600) joins the ":" into one Character.
            if let last = rest.last, let colon = last.utf8.lastIndex(of: UInt8(ascii: ":")),
               FirestoreREST.verbs.contains(String(last[last.utf8.index(after: colon)...])) {
                verb = String(last[last.utf8.index(after: colon)...])
                rest[rest.count - 1] = String(last[..<colon])
            }
            guard rest.first == "documents" else { throw HTTPSError(.notFound, "no Firestore route for \(request.path)") }
            let path = Array(rest.dropFirst())
            let call = Call(request: request, caller: caller, names: FirestoreJSON(project: project), parameters: request.queryItems)
            if call.parameter("readTime") != nil { throw FirestoreREST.readTimeRefused }
            let body = try await dispatch(call, path: path, verb: verb)
            return .restJSON(body)
        } catch let error as HTTPSError {
            return .googleError(error)
        } catch {
            return .googleError(internalError(error, request))
        }
    }

    func dispatch(_ call: Call, path: [String], verb: String?) async throws -> Value {
        let method = call.request.method
        if let verb {
            guard method == "POST" else { throw HTTPSError(.notFound, "\(verb) needs POST (got \(method))") }
            let parent = path.isEmpty ? nil : try document(path, field: "parent")
            switch verb {
            case "runQuery": return try await runQuery(call, parent: parent)
            case "runAggregationQuery": return try await runAggregationQuery(call, parent: parent)
            case "listCollectionIds": return try await listCollectionIds(call, parent: parent)
            case "partitionQuery": return try await partitionQuery(call, parent: parent)
            case "listen", "write", "listDocuments":
                throw HTTPSError(.unimplemented, "\(verb) is not served by Hearth's REST API (no streaming Listen or Write; list documents with GET)")
            default:
                guard path.isEmpty else { throw HTTPSError(.notFound, "\(verb) is a method of the database's documents root, not of a document") }
                switch verb {
                case "batchGet": return try await batchGet(call)
                case "beginTransaction": return try await beginTransaction(call)
                case "commit": return try await commit(call)
                case "rollback": return try await rollback(call)
                case "batchWrite": return try await batchWrite(call)
                default: throw HTTPSError(.notFound, "unknown method \(verb)")
                }
            }
        }
        let isDocument = !path.isEmpty && path.count % 2 == 0
        // `GET …/documents/a/b/` (an empty collection id): the documents of every collection
        // directly under a/b (or the root), as Firestore's listDocuments lists them.
        if method == "GET", path.count % 2 == 0, call.request.path.hasSuffix("/") {
            return try await list(call, QuerySpec(parent: path.isEmpty ? nil : try document(path, field: "parent"), collectionID: ""))
        }
        switch (method, isDocument) {
        case ("GET", true): return try await get(call, try document(path, field: "name"))
        case ("GET", false): return try await list(call, QuerySpec(collection: try collection(path)))
        case ("POST", false): return try await create(call, try collection(path))
        case ("PATCH", true): return try await patch(call, try document(path, field: "document.name"))
        case ("DELETE", true): return try await delete(call, try document(path, field: "name"))
        default:
            throw HTTPSError(.notFound, "no Firestore method \(method) on \(isDocument ? "a document" : "a collection") path")
        }
    }

    func document(_ segments: [String], field: String) throws(HTTPSError) -> DocumentPath {
        do { return try DocumentPath(segments.joined(separator: "/")) } catch {
            throw .invalidArgument("\(field): \(error.message)")
        }
    }

    func collection(_ segments: [String]) throws(HTTPSError) -> CollectionPath {
        guard !segments.isEmpty else { throw .invalidArgument("a collection id is required after documents/") }
        do { return try CollectionPath(segments.joined(separator: "/")) } catch {
            throw .invalidArgument("parent: \(error.message)")
        }
    }

    /// Anything but an `HTTPSError` is the server's fault: logged, and answered without detail.
    func internalError(_ error: any Error, _ request: HTTPServerRequest) -> HTTPSError {
        runtime.log.log(.error, "firestore request failed", ["method": .string(request.method), "path": .string(request.path), "error": .string("\(error)")])
        return HTTPSError(.internal, "internal error")
    }

    // MARK: transactions' ids

    static func transactionBytes(_ id: UInt64) -> String {
        Base64.encode((0..<8).map { UInt8(truncatingIfNeeded: id >> (56 - 8 * UInt64($0))) })
    }

    static func transactionID(_ json: Value?, field: String = "transaction") throws(HTTPSError) -> UInt64? {
        guard let json else { return nil }
        guard case .string(let text) = json, let bytes = Base64.decodeProtoBytes(text), bytes.count == 8 else {
            throw .invalidArgument("\(field): not a transaction id this server issued")
        }
        return bytes.reduce(0) { ($0 << 8) | UInt64($1) }
    }

    /// A `transaction` query parameter (GET and list).
    static func transactionID(parameter: String?) throws(HTTPSError) -> UInt64? {
        guard let parameter else { return nil }
        return try transactionID(.string(parameter))
    }

    /// Reads at a past time need snapshots the store does not keep.
    static let readTimeRefused = HTTPSError(.invalidArgument, "readTime is not supported: Hearth reads the latest committed state only")

    /// The transaction a read request names or begins (`transaction` or `newTransaction`).
    func readTransaction(_ body: [String: Value], for caller: FirestoreCaller) throws(HTTPSError) -> (id: UInt64?, began: Bool) {
        if body["readTime"] != nil { throw FirestoreREST.readTimeRefused }
        let given = try FirestoreREST.transactionID(body["transaction"])
        guard let options = body["newTransaction"] else { return (given, false) }
        guard given == nil else { throw .invalidArgument("set transaction or newTransaction, not both") }
        return (try begin(options, for: caller), true)
    }

    /// Whose a REST transaction is: only requests of the same caller (the admin, one signed-in
    /// user, or the signed-out) may read, commit or roll it back; to anyone else it is not open.
    func owner(_ caller: FirestoreCaller) -> UInt64 {
        var hasher = Hasher()
        hasher.combine("firestore-rest")
        switch caller {
        case .admin: hasher.combine(0)
        case .client(nil): hasher.combine(1)
        case .client(let auth?): hasher.combine(2); hasher.combine(auth.uid)
        }
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }

    func begin(_ options: Value?, for caller: FirestoreCaller) throws(HTTPSError) -> UInt64 {
        if let options, case .map(let o) = options, o["readOnly"] != nil, o["readWrite"] != nil {
            throw .invalidArgument("options: set readOnly or readWrite, not both")
        }
        if case .map(let readOnlyOptions)? = options?["readOnly"], readOnlyOptions["readTime"] != nil {
            throw FirestoreREST.readTimeRefused
        }
        let transactions = store.transactions
        let id = transactions.begin(owner: owner(caller))
        readOnly.withLock { ids in
            // Forget read-only transactions that ended (committed, rolled back or expired).
            ids = ids.filter { transactions.isOpen($0) }
            if options?["readOnly"] != nil { ids.insert(id) }
        }
        return id
    }

    // MARK: get, list

    func get(_ call: Call, _ path: DocumentPath) async throws -> Value {
        let mask = try FirestoreREST.queryMask(call.all("mask.fieldPaths"), field: "mask.fieldPaths")
        // Authorized before a transaction reads (and locks) anything: a denied read takes no lock.
        var doc = try await store.get(path)
        try access.authorize(call.caller, .get(path, doc), reads: .single)
        if let txn = try FirestoreREST.transactionID(parameter: call.parameter("transaction")) {
            doc = try await readInTransaction(txn, [path], call)[0]
        }
        guard let doc else { throw HTTPSError(.notFound, "Document \"\(call.names.name(path))\" not found.") }
        return call.names.document(doc, mask: mask)
    }

    static func queryMask(_ paths: [String], field: String) throws(HTTPSError) -> [FieldPath]? {
        guard !paths.isEmpty else { return nil }
        var out: [FieldPath] = []
        for p in paths { out.append(try FirestoreJSON.fieldPath(p, field: field)) }
        return out
    }

    /// GET on a collection: its documents in name order (or `orderBy`), a page at a time.
    /// A collection's documents (`spec` a collection's), or those of every collection directly
    /// under a parent (`spec` kindless).
    func list(_ call: Call, _ query: QuerySpec) async throws -> Value {
        let mask = try FirestoreREST.queryMask(call.all("mask.fieldPaths"), field: "mask.fieldPaths")
        let pageSize = try call.parameter("pageSize").map { try FirestoreJSON.int32(.string($0), field: "pageSize") }
        let showMissing = call.parameter("showMissing") == "true"
        var spec = query
        if let orderBy = call.parameter("orderBy"), !orderBy.isEmpty {
            if showMissing { throw HTTPSError(.invalidArgument, "orderBy cannot be combined with showMissing") }
            spec.orderBy = try FirestoreREST.orderBy(orderBy)
            try spec.validate()
        }
        let token = try call.parameter("pageToken").flatMap { $0.isEmpty ? nil : try PageToken(text: $0, names: call.names) }
        if showMissing {
            // Firestore's words, for a listing without a collection id.
            guard let collection = spec.collectionPath else { throw HTTPSError(.invalidArgument, "collection id must be set when show_missing is true") }
            return try await listWithMissing(call, collection, mask: mask, pageSize: pageSize, after: token)
        }
        if let token { spec.startAt = QuerySpec.Cursor(values: token.values, before: false) }
        // The rules see the page size as the query's limit; one more is read to know if a page follows.
        if let pageSize, pageSize > 0 { spec.limit = pageSize }
        try access.authorize(call.caller, .list(spec, offset: 0), reads: .single)
        if let pageSize, pageSize > 0 { spec.limit = pageSize + 1 }
        var docs: [StoredDocument]
        if let txn = try FirestoreREST.transactionID(parameter: call.parameter("transaction")) {
            docs = try await store.transactions.query(txn, spec, caller: owner(call.caller))
        } else {
            docs = try await store.query(spec)
        }
        var out: [String: Value] = [:]
        if let pageSize, pageSize > 0, docs.count > pageSize {
            docs.removeLast(docs.count - pageSize)
            out["nextPageToken"] = .string(PageToken(after: docs[docs.count - 1], order: spec.normalizedOrder).text(names: call.names))
        }
        if !docs.isEmpty { out["documents"] = .array(docs.map { call.names.document($0, mask: mask) }) }
        return .map(out)
    }

    /// `showMissing`: documents that do not exist but have subcollections are listed too, by name
    /// only, as Firestore lists them.
    func listWithMissing(_ call: Call, _ collection: CollectionPath, mask: [FieldPath]?, pageSize: Int?, after token: PageToken?) async throws -> Value {
        try access.authorize(call.caller, .list(QuerySpec(collection: collection), offset: 0), reads: .single)
        var listing = try await store.listDocuments(in: collection)
        // Firestore's order (by bytes, segment by segment), not Swift's `<=` on the whole string.
        if case .reference(let last)? = token?.values.last { listing.removeAll { Value.compare(.reference($0.path.description), .reference(last)) != .descending } }
        var out: [String: Value] = [:]
        if let pageSize, pageSize > 0, listing.count > pageSize {
            listing.removeLast(listing.count - pageSize)
            out["nextPageToken"] = .string(PageToken(values: [.reference(listing[listing.count - 1].path.description)]).text(names: call.names))
        }
        let present = try await store.getAll(listing.filter(\.exists).map(\.path))
        var byPath: [DocumentPath: StoredDocument] = [:]
        for doc in present.compactMap({ $0 }) { byPath[doc.path] = doc }
        let docs: [Value] = listing.map { entry in
            byPath[entry.path].map { call.names.document($0, mask: mask) } ?? ["name": .string(call.names.name(entry.path))]
        }
        if !docs.isEmpty { out["documents"] = .array(docs) }
        return .map(out)
    }

    /// `orderBy=a desc, b` of a list request.
    static func orderBy(_ text: String) throws(HTTPSError) -> [QuerySpec.Order] {
        var out: [QuerySpec.Order] = []
        for clause in text.split(separator: ",") {
            let words = clause.split(separator: " ", omittingEmptySubsequences: true)
            guard let first = words.first, words.count <= 2 else { throw .invalidArgument("orderBy: '\(clause)' is not 'field [asc|desc]'") }
            let field = try FirestoreJSON.fieldPath(String(first), field: "orderBy")
            switch words.count == 2 ? words[1].lowercased() : "asc" {
            case "asc": out.append(QuerySpec.Order(field, .ascending))
            case "desc": out.append(QuerySpec.Order(field, .descending))
            default: throw .invalidArgument("orderBy: '\(words[1])' is not asc or desc")
            }
        }
        return out
    }

    /// Where the next page of a list starts: the last document's values in the list's order
    /// (its name last), as typed JSON in base64url.
    struct PageToken {
        var values: [Value]

        init(values: [Value]) { self.values = values }

        init(after doc: StoredDocument, order: [QuerySpec.Order]) {
            values = order.map { o in o.field.isDocumentID ? .reference(doc.path.description) : (Value.map(doc.fields).value(at: o.field) ?? .null) }
        }

        init(text: String, names: FirestoreJSON) throws(HTTPSError) {
            guard let bytes = Base64.decodeURL(text), case .array(let items)? = try? JSONParser.parse(bytes, options: FirestoreJSON.readOptions) else {
                throw .invalidArgument("pageToken: not a page token this server issued")
            }
            var values: [Value] = []
            for item in items { values.append(try names.value(item, field: "pageToken")) }
            self.values = values
        }

        func text(names: FirestoreJSON) -> String {
            Base64.encodeURL(JSONWriter.encode(.array(values.map(names.json))))
        }
    }

    // MARK: collections

    /// The ids of the collections directly under a document (or the root): admin only, as the
    /// client SDKs cannot call it either.
    func listCollectionIds(_ call: Call, parent: DocumentPath?) async throws -> Value {
        guard call.caller.isAdmin else {
            throw HTTPSError(.permissionDenied, "Missing or insufficient permissions. (listCollectionIds is for the admin token only)")
        }
        let body = try call.body()
        let pageSize = try body["pageSize"].map { try FirestoreJSON.int32($0, field: "pageSize") } ?? 0
        var ids = try await store.listCollections(under: parent).map(\.id).sorted { Value.compareUTF8($0, $1) == .ascending }
        if case .string(let token)? = body["pageToken"], !token.isEmpty {
            guard let bytes = Base64.decodeURL(token), let after = String(validating: bytes, as: UTF8.self) else {
                throw HTTPSError(.invalidArgument, "pageToken: not a page token this server issued")
            }
            ids.removeAll { Value.compareUTF8($0, after) != .descending }
        }
        var out: [String: Value] = [:]
        if pageSize > 0, ids.count > pageSize {
            ids.removeLast(ids.count - pageSize)
            out["nextPageToken"] = .string(Base64.encodeURL(Array(ids[ids.count - 1].utf8)))
        }
        if !ids.isEmpty { out["collectionIds"] = .array(ids.map { .string($0) }) }
        return .map(out)
    }

    // MARK: batchGet

    func batchGet(_ call: Call) async throws -> Value {
        let body = try call.body()
        let mask = try FirestoreJSON.mask(body["mask"], field: "mask")
        guard case .array(let names)? = body["documents"] ?? .array([]) else { throw HTTPSError(.invalidArgument, "documents: must be an array of names") }
        var paths: [DocumentPath] = []
        var seen = Set<DocumentPath>()
        for (i, name) in names.enumerated() {
            guard case .string(let s) = name else { throw HTTPSError(.invalidArgument, "documents[\(i)]: must be a string") }
            // "Duplicate names will be elided", as Firestore's reference says (one answer each).
            let path = try call.names.documentPath(s, field: "documents[\(i)]")
            if seen.insert(path).inserted { paths.append(path) }
        }
        // Authorized before a transaction begins or reads (and locks) anything.
        var docs = try await store.getAll(paths)
        try access.authorize(call.caller, zip(paths, docs).map { .get($0, $1) }, reads: .multiple)
        let (txn, isNew) = try readTransaction(body, for: call.caller)
        let began = isNew ? txn : nil
        if let txn { docs = try await readInTransaction(txn, paths, call) }
        let readTime = Value.string(store.clock.now().rfc3339)
        var out: [Value] = []
        for (path, doc) in zip(paths, docs) {
            var item: [String: Value] = ["readTime": readTime]
            if let doc { item["found"] = call.names.document(doc, mask: mask) } else { item["missing"] = .string(call.names.name(path)) }
            if let began, out.isEmpty { item["transaction"] = .string(FirestoreREST.transactionBytes(began)) }
            out.append(.map(item))
        }
        if out.isEmpty, let began { out.append(["transaction": .string(FirestoreREST.transactionBytes(began)), "readTime": readTime]) }
        return .array(out)
    }

    // MARK: transactions

    func beginTransaction(_ call: Call) async throws -> Value {
        let id = try begin(try call.body()["options"], for: call.caller)
        return ["transaction": .string(FirestoreREST.transactionBytes(id))]
    }

    func rollback(_ call: Call) async throws -> Value {
        guard let id = try FirestoreREST.transactionID(try call.body()["transaction"]) else {
            throw HTTPSError(.invalidArgument, "transaction: is required")
        }
        store.transactions.rollback(id, caller: owner(call.caller))
        // Still open: another caller's, which stays read-only.
        if !store.transactions.isOpen(id) { _ = readOnly.withLock { $0.remove(id) } }
        return .emptyMap
    }

    /// Reads documents in a transaction of the caller's (locking them), checking the rules again
    /// on what it read; a denial there ends the transaction, so it holds no lock.
    func readInTransaction(_ txn: UInt64, _ paths: [DocumentPath], _ call: Call) async throws -> [StoredDocument?] {
        let docs = try await store.transactions.get(txn, paths, caller: owner(call.caller))
        do {
            try access.authorize(call.caller, zip(paths, docs).map { .get($0, $1) }, reads: paths.count > 1 ? .multiple : .single)
        } catch {
            store.transactions.rollback(txn, caller: owner(call.caller))
            throw error
        }
        return docs
    }
}

/// Who sent a REST request.
enum FirestoreCaller: Sendable {
    /// The admin token (or emulator mode's `owner`): trusted, no rules.
    case admin
    /// A client: signed in (a verified ID token) or not (nil).
    case client(CallerAuth?)

    var isAdmin: Bool { if case .admin = self { return true } else { return false } }
}

extension HTTPServerResponse {
    /// A REST answer: plain JSON (not the callable protocol's wrapped integers).
    static func restJSON(_ value: Value, status: Int = 200) -> HTTPServerResponse {
        HTTPServerResponse(status: status, headers: HTTPHeaders([("Content-Type", "application/json; charset=UTF-8")]),
                           body: .bytes(JSONWriter.encode(value)))
    }

    /// Google's JSON error shape: `{"error": {"code": 404, "message": "…", "status": "NOT_FOUND"}}`.
    static func googleError(_ error: HTTPSError) -> HTTPServerResponse {
        let status = error.code.httpStatus
        return restJSON(["error": ["code": .int(Int64(status)), "message": .string(error.message), "status": .string(error.code.canonicalName)]], status: status)
    }
}
