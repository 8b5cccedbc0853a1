import HearthModel
import HearthStore

/// createDocument, patch, delete, commit and batchWrite: Google's `Write` messages read into the
/// store's `DocumentWrite`s and committed as any commit is (triggers, change feed, recording).
///
/// A client's writes are checked against the rules with the documents as they are and as the
/// write would leave them (`request.resource`), and committed only if those documents are still
/// what the rules saw: a concurrent change makes the commit conflict, and the whole check runs
/// again (a few times, then `ABORTED`).
extension FirestoreREST {
    // MARK: Write messages

    func write(_ json: Value, field: String, names: FirestoreJSON) throws(HTTPSError) -> DocumentWrite {
        guard case .map(let w) = json else { throw .invalidArgument("\(field): a Write must be an object") }
        let kinds = ["update", "delete", "transform"].filter { w[$0] != nil }
        guard kinds.count == 1 else { throw .invalidArgument("\(field): a Write sets exactly one of update, delete, transform (got \(kinds.isEmpty ? "none" : kinds.joined(separator: ", ")))") }
        var write: DocumentWrite
        switch kinds[0] {
        case "update":
            guard case .map(let doc)? = w["update"], case .string(let name)? = doc["name"] else {
                throw .invalidArgument("\(field).update.name: is required")
            }
            let path = try names.documentPath(name, field: field + ".update.name")
            let fields = try names.fields(doc["fields"], field: field + ".update.fields")
            let mask = try FirestoreJSON.mask(w["updateMask"], field: field + ".updateMask")
            write = DocumentWrite(path: path, operation: .update(fields: fields, mask: mask))
            if let list = w["updateTransforms"] {
                guard case .array(let items) = list else { throw .invalidArgument("\(field).updateTransforms: must be an array") }
                write.transforms = try items.enumerated().map { i, t throws(HTTPSError) in try transform(t, field: "\(field).updateTransforms[\(i)]", names: names) }
            }
        case "delete":
            guard case .string(let name)? = w["delete"] else { throw .invalidArgument("\(field).delete: must be a document name") }
            write = DocumentWrite(path: try names.documentPath(name, field: field + ".delete"), operation: .delete)
            if w["updateMask"] != nil || w["updateTransforms"] != nil {
                throw .invalidArgument("\(field): a delete cannot carry updateMask or updateTransforms")
            }
        default:
            guard case .map(let t)? = w["transform"], case .string(let name)? = t["document"] else {
                throw .invalidArgument("\(field).transform.document: is required")
            }
            let path = try names.documentPath(name, field: field + ".transform.document")
            guard case .array(let items)? = t["fieldTransforms"] else { throw .invalidArgument("\(field).transform.fieldTransforms: is required") }
            write = DocumentWrite(path: path, operation: .update(fields: [:], mask: []))
            write.transforms = try items.enumerated().map { i, t throws(HTTPSError) in try transform(t, field: "\(field).transform.fieldTransforms[\(i)]", names: names) }
        }
        if case .map(let pre)? = w["currentDocument"] {
            if pre["exists"] != nil && pre["updateTime"] != nil {
                throw .invalidArgument("\(field).currentDocument: set exists or updateTime, not both")
            }
            if let exists = pre["exists"] {
                guard case .bool(let b) = exists else { throw .invalidArgument("\(field).currentDocument.exists: must be true or false") }
                write.precondition = .exists(b)
            } else if let time = pre["updateTime"] {
                write.precondition = .updateTime(try FirestoreJSON.timestamp(time, field: field + ".currentDocument.updateTime"))
            }
        }
        return write
    }

    func transform(_ json: Value, field: String, names: FirestoreJSON) throws(HTTPSError) -> FieldTransformSpec {
        guard case .map(let t) = json, case .string(let pathText)? = t["fieldPath"] else {
            throw .invalidArgument("\(field).fieldPath: is required")
        }
        let path = try FirestoreJSON.fieldPath(pathText, field: field + ".fieldPath")
        let kinds = t.keys.filter { $0 != "fieldPath" }
        guard kinds.count == 1, let kind = kinds.first, let operand = t[kind] else {
            throw .invalidArgument("\(field): a FieldTransform sets exactly one transform beside fieldPath")
        }
        func elements() throws(HTTPSError) -> [Value] {
            guard case .array(let items)? = operand["values"] ?? .array([]) else { throw .invalidArgument("\(field).\(kind).values: must be an array") }
            return try items.enumerated().map { i, v throws(HTTPSError) in try names.value(v, field: "\(field).\(kind).values[\(i)]") }
        }
        func number() throws(HTTPSError) -> Value {
            let v = try names.value(operand, field: "\(field).\(kind)")
            guard v.doubleValue != nil else { throw .invalidArgument("\(field).\(kind): must be an integerValue or doubleValue (got \(v.typeName))") }
            return v
        }
        switch kind {
        case "setToServerValue":
            guard operand == .string("REQUEST_TIME") || operand == .int(1) else {
                throw .invalidArgument("\(field).setToServerValue: only REQUEST_TIME is supported")
            }
            return FieldTransformSpec(path, .serverTimestamp)
        case "increment": return FieldTransformSpec(path, .increment(try number()))
        case "maximum": return FieldTransformSpec(path, .maximum(try number()))
        case "minimum": return FieldTransformSpec(path, .minimum(try number()))
        case "appendMissingElements": return FieldTransformSpec(path, .arrayUnion(try elements()))
        case "removeAllFromArray": return FieldTransformSpec(path, .arrayRemove(try elements()))
        default: throw .invalidArgument("\(field): unknown transform '\(kind)'")
        }
    }

    static func precondition(_ call: Call) throws(HTTPSError) -> Precondition? {
        let exists = call.parameter("currentDocument.exists"), time = call.parameter("currentDocument.updateTime")
        if exists != nil && time != nil { throw .invalidArgument("currentDocument: set exists or updateTime, not both") }
        if let exists {
            guard exists == "true" || exists == "false" else { throw .invalidArgument("currentDocument.exists: must be true or false") }
            return .exists(exists == "true")
        }
        guard let time else { return nil }
        return .updateTime(try FirestoreJSON.timestamp(.string(time), field: "currentDocument.updateTime"))
    }

    // MARK: committing

    /// Commits `writes` as the caller may. For a client, the rules see each document once: as it
    /// is before the commit (`resource`) and as all of the commit's writes to it leave it
    /// (`request.resource`), at one request time. Outside a transaction, the commit then checks
    /// that those documents are still what the rules saw (and, if not, everything runs again);
    /// inside one, they are read through the transaction, so its commit validates them, and a
    /// denial ends the transaction. Returns the result and the documents as they were.
    func commitChecked(_ writes: [DocumentWrite], _ call: Call, txn: UInt64? = nil, verifies: [Verify] = []) async throws -> (CommitResult, [StoredDocument?]) {
        let caller = call.caller
        let owner = owner(caller)
        if let txn, readOnly.withLock({ $0.contains(txn) }) {
            if !writes.isEmpty { throw HTTPSError(.invalidArgument, "Cannot modify entities in a read-only transaction.") }
            // Open and the caller's (else INVALID_ARGUMENT, and another caller's stays read-only).
            let docs: [StoredDocument?]
            do { docs = try await store.transactions.get(txn, verifies.map(\.path), caller: owner) } catch {
                if !store.transactions.isOpen(txn) { readOnly.withLock { _ = $0.remove(txn) } }
                throw error
            }
            // The transaction ends here whatever the verifies find.
            defer {
                store.transactions.rollback(txn, caller: owner)
                readOnly.withLock { _ = $0.remove(txn) }
            }
            _ = try checkVerifies(verifies, docs, call)
            return (CommitResult(commitTime: store.clock.now(), writeResults: []), [])
        }
        var attempt = 0
        while true {
            attempt += 1
            var current: [StoredDocument?] = []
            var validations: [ReadValidation] = []
            if !verifies.isEmpty {
                // Read through the transaction when there is one (its commit then checks them);
                // outside one, checked now and again by the commit.
                let paths = verifies.map(\.path)
                let docs: [StoredDocument?]
                if let txn { docs = try await store.transactions.get(txn, paths, caller: owner) } else { docs = try await store.getAll(paths) }
                let checked: [ReadValidation]
                do { checked = try checkVerifies(verifies, docs, call) } catch {
                    // A transaction whose commit fails ends, holding no lock.
                    if let txn { store.transactions.rollback(txn, caller: owner) }
                    throw error
                }
                if txn == nil { validations += checked }
            }
            if !caller.isAdmin {
                let paths = writes.map(\.path)
                if let txn { current = try await store.transactions.get(txn, paths, caller: owner) } else { current = try await store.getAll(paths) }
                let ruleReads: [ReadValidation]
                do {
                    let now = store.clock.now()
                    ruleReads = try access.authorize(caller, try FirestoreREST.actions(writes, over: current, at: now),
                                                     reads: writes.count > 1 || txn != nil ? .multiple : .single, at: now)
                } catch {
                    if let txn { store.transactions.rollback(txn, caller: owner) }
                    throw error
                }
                if txn == nil {
                    var seen = Set(validations.compactMap { if case .document(let path, _) = $0 { path } else { nil } })
                    for (path, doc) in zip(paths, current) where seen.insert(path).inserted {
                        validations.append(.document(path, updateTime: doc?.updateTime))
                    }
                    for case .document(let path, let time) in ruleReads where seen.insert(path).inserted {
                        validations.append(.document(path, updateTime: time))
                    }
                }
            }
            do {
                let result: CommitResult
                if let txn {
                    result = try await store.transactions.commit(txn, writes, caller: owner)
                } else {
                    result = try await store.commit(writes, validations: validations)
                }
                if !writes.isEmpty { runtime.recording.recorder?.input(.write(Boundary.Commit(writes: writes))) }
                return (result, current)
            } catch let error as HTTPSError where error.code == .aborted && txn == nil && !validations.isEmpty && attempt < 5 {
                continue
            } catch let error as HTTPSError {
                throw FirestoreREST.namingDocuments(error, writes, call.names)
            }
        }
    }

    /// What a commit does to each document it writes, for the rules: every write to one path
    /// folded into one action, from the document before the commit to the document after all of
    /// them. Preconditions are left to the commit, so a denied request learns nothing of a
    /// document it may not read.
    static func actions(_ writes: [DocumentWrite], over current: [StoredDocument?], at now: Timestamp) throws(HTTPSError) -> [FirestoreAccess.Action] {
        var before: [DocumentPath: StoredDocument?] = [:]
        var after: [DocumentPath: StoredDocument?] = [:]
        var order: [DocumentPath] = []
        for (write, existing) in zip(writes, current) {
            if before[write.path] == nil {
                before[write.path] = .some(existing)
                after[write.path] = .some(existing)
                order.append(write.path)
            }
            var unconditional = write
            unconditional.precondition = nil
            let state = after[write.path] ?? nil
            let fields = try DocumentStore.preview(unconditional, over: state, at: now)
            after[write.path] = .some(fields.map { StoredDocument(path: write.path, fields: $0, createTime: state?.createTime ?? now, updateTime: now) })
        }
        return order.map { path in
            let original = before[path] ?? nil
            switch (original, after[path] ?? nil) {
            case (let original, nil): return .delete(path, before: original)
            case (nil, let final?): return .create(path, after: final.fields)
            case (let original?, let final?): return .update(path, before: original, after: final.fields)
            }
        }
    }

    /// The store's errors name documents by slash path; Firestore's by resource name
    /// (`Document already exists: projects/p/databases/(default)/documents/a/b`).
    static func namingDocuments(_ error: HTTPSError, _ writes: [DocumentWrite], _ names: FirestoreJSON) -> HTTPSError {
        var error = error
        // On bytes: a path starting with a combining mark joins the space before it.
        for prefix in ["No document to update: ", "Document already exists: "] where error.message.utf8.starts(with: prefix.utf8) {
            let path = Substring(error.message.utf8.dropFirst(prefix.utf8.count))
            if let write = writes.first(where: { UTF8Key.equal(Substring($0.path.description), path) }) {
                error.message = prefix + names.name(write.path)
            }
        }
        return error
    }

    func commit(_ call: Call) async throws -> Value {
        let body = try call.body()
        // `verify` writes (what firebase-js-sdk's transactions send for documents they read and did
        // not write: a precondition on the document, needing only read access) are checked, not
        // written; the others are written. Each has its result in its place.
        var writes: [DocumentWrite] = []
        var verifies: [Verify] = []
        var order: [Int?] = []  // for each write of the request: its index in `writes`, nil for a verify
        if let json = body["writes"] {
            guard case .array(let items) = json else { throw HTTPSError(.invalidArgument, "writes: must be an array") }
            for (i, item) in items.enumerated() {
                if let verify = try FirestoreREST.verify(item, field: "writes[\(i)]", names: call.names) {
                    verifies.append(verify)
                    order.append(nil)
                } else {
                    order.append(writes.count)
                    writes.append(try write(item, field: "writes[\(i)]", names: call.names))
                }
            }
        }
        let txn = try FirestoreREST.transactionID(body["transaction"])
        let (result, _) = try await commitChecked(writes, call, txn: txn, verifies: verifies)
        if let txn { readOnly.withLock { _ = $0.remove(txn) } }
        var out: [String: Value] = ["commitTime": .string(result.commitTime.rfc3339)]
        if !order.isEmpty {
            out["writeResults"] = .array(order.map { index in
                guard let index else { return .map([:]) }
                return FirestoreREST.writeResult(result.writeResults[index], writes[index], call.names)
            })
        }
        return .map(out)
    }

    /// A `verify` write: the document must meet `precondition` at the commit.
    struct Verify {
        let path: DocumentPath
        let precondition: Precondition
    }

    /// The write at `field` when it is a `verify` (a document name and a `currentDocument`
    /// precondition, nothing else); nil for any other write.
    static func verify(_ json: Value, field: String, names: FirestoreJSON) throws(HTTPSError) -> Verify? {
        guard case .map(let w) = json, let target = w["verify"] else { return nil }
        if w["update"] != nil || w["delete"] != nil || w["transform"] != nil || w["updateMask"] != nil || w["updateTransforms"] != nil {
            throw .invalidArgument("\(field): a verify write carries a document name and a currentDocument precondition, nothing else")
        }
        guard case .string(let name) = target else { throw .invalidArgument("\(field).verify: must be a document name") }
        let path = try names.documentPath(name, field: field + ".verify")
        guard case .map(let pre)? = w["currentDocument"], (pre["exists"] == nil) != (pre["updateTime"] == nil) else {
            throw .invalidArgument("\(field).currentDocument: a verify write needs exists or updateTime")
        }
        if let exists = pre["exists"] {
            guard case .bool(let b) = exists else { throw .invalidArgument("\(field).currentDocument.exists: must be true or false") }
            return Verify(path: path, precondition: .exists(b))
        }
        return Verify(path: path, precondition: .updateTime(try FirestoreJSON.timestamp(pre["updateTime"]!, field: field + ".currentDocument.updateTime")))
    }

    /// Checks `verifies` for the caller: read access to each document (a client's), then its
    /// precondition (`check`).
    func checkVerifies(_ verifies: [Verify], _ docs: [StoredDocument?], _ call: Call) throws(HTTPSError) -> [ReadValidation] {
        guard !verifies.isEmpty else { return [] }
        if !call.caller.isAdmin { _ = try access.authorize(call.caller, zip(verifies, docs).map { .get($0.path, $1) }, reads: .multiple) }
        return try FirestoreREST.check(verifies, against: docs, names: call.names)
    }

    /// Checks `verifies` against the documents as they are; their update times, for the commit to
    /// check again. A document not as the client read it fails the commit with FAILED_PRECONDITION.
    static func check(_ verifies: [Verify], against docs: [StoredDocument?], names: FirestoreJSON) throws(HTTPSError) -> [ReadValidation] {
        var validations: [ReadValidation] = []
        for (verify, doc) in zip(verifies, docs) {
            let holds: Bool
            switch verify.precondition {
            case .exists(let exists): holds = (doc != nil) == exists
            case .updateTime(let time): holds = doc?.updateTime == time
            }
            guard holds else {
                throw HTTPSError(.failedPrecondition, "the stored version of \(names.name(verify.path)) does not match the required base version")
            }
            validations.append(.document(verify.path, updateTime: doc?.updateTime))
        }
        return validations
    }

    func writeList(_ json: Value?, names: FirestoreJSON) throws(HTTPSError) -> [DocumentWrite] {
        guard let json else { return [] }
        guard case .array(let items) = json else { throw .invalidArgument("writes: must be an array") }
        return try items.enumerated().map { i, w throws(HTTPSError) in try write(w, field: "writes[\(i)]", names: names) }
    }

    /// One write's result. The array transforms answer null, as Firestore's do; the others
    /// the value they stored.
    static func writeResult(_ r: WriteResult, _ write: DocumentWrite?, _ names: FirestoreJSON) -> Value {
        var out: [String: Value] = [:]
        if let t = r.updateTime { out["updateTime"] = .string(t.rfc3339) }
        if !r.transformResults.isEmpty {
            out["transformResults"] = .array(r.transformResults.enumerated().map { i, value in
                switch write?.transforms[safe: i]?.transform {
                case .arrayUnion?, .arrayRemove?: return names.json(.null)
                default: return names.json(value)
                }
            })
        }
        return .map(out)
    }

    /// Each write on its own, in order; one failing does not stop the others.
    func batchWrite(_ call: Call) async throws -> Value {
        let body = try call.body()
        let writes = try writeList(body["writes"], names: call.names)
        var paths: Set<DocumentPath> = []
        for write in writes where !paths.insert(write.path).inserted {
            throw HTTPSError(.invalidArgument, "You cannot write to the same document more than once per request (\(call.names.name(write.path))).")
        }
        var results: [Value] = []
        var statuses: [Value] = []
        for write in writes {
            do {
                let (result, _) = try await commitChecked([write], call)
                results.append(FirestoreREST.writeResult(result.writeResults.first ?? WriteResult(updateTime: nil), write, call.names))
                statuses.append(.emptyMap)
            } catch let error as HTTPSError {
                results.append(.emptyMap)
                statuses.append(["code": .int(Int64(error.code.rpcCode)), "message": .string(error.message)])
            }
        }
        return writes.isEmpty ? .emptyMap : ["writeResults": .array(results), "status": .array(statuses)]
    }

    // MARK: document methods

    /// The document as `write` left it, from the commit's result: what createDocument and patch answer.
    func written(_ write: DocumentWrite, before: StoredDocument?, result: CommitResult, names: FirestoreJSON, mask: [FieldPath]?) async throws -> Value {
        // The stored form (timestamps at the store's precision) is what a read returns.
        guard let doc = try await store.get(write.path), doc.updateTime == result.writeResults.first?.updateTime else {
            // Changed again since: answer from the write itself.
            let fields = (try? DocumentStore.preview(write, over: before, at: result.commitTime)) ?? nil
            let stored = StoredDocument(path: write.path, fields: fields ?? [:], createTime: before?.createTime ?? result.commitTime,
                                        updateTime: result.writeResults.first?.updateTime ?? result.commitTime)
            return names.document(stored, mask: mask)
        }
        return names.document(doc, mask: mask)
    }

    func create(_ call: Call, _ collection: CollectionPath) async throws -> Value {
        let body = try call.body()
        let mask = try FirestoreREST.queryMask(call.all("mask.fieldPaths"), field: "mask.fieldPaths")
        if case .string(let name)? = body["name"], !name.isEmpty {
            throw HTTPSError(.invalidArgument, "document.name: must be empty in createDocument (the id comes from documentId)")
        }
        let id = call.parameter("documentId").flatMap { $0.isEmpty ? nil : $0 } ?? runtime.random.autoID()
        let path: DocumentPath
        do { path = try collection.document(id) } catch { throw HTTPSError(.invalidArgument, "documentId: \(error.message)") }
        let write = DocumentWrite.create(path, try call.names.fields(body["fields"], field: "document.fields"))
        let (result, current) = try await commitChecked([write], call)
        return try await written(write, before: current.first ?? nil, result: result, names: call.names, mask: mask)
    }

    func patch(_ call: Call, _ path: DocumentPath) async throws -> Value {
        let body = try call.body()
        let mask = try FirestoreREST.queryMask(call.all("mask.fieldPaths"), field: "mask.fieldPaths")
        if case .string(let name)? = body["name"], !name.isEmpty, try call.names.documentPath(name, field: "document.name") != path {
            throw HTTPSError(.invalidArgument, "document.name: '\(name)' is not the document of the URL")
        }
        let fields = try call.names.fields(body["fields"], field: "document.fields")
        let updateMask = try FirestoreREST.queryMask(call.all("updateMask.fieldPaths"), field: "updateMask.fieldPaths")
        let write = DocumentWrite(path: path, operation: .update(fields: fields, mask: updateMask), precondition: try FirestoreREST.precondition(call))
        let (result, current) = try await commitChecked([write], call)
        return try await written(write, before: current.first ?? nil, result: result, names: call.names, mask: mask)
    }

    func delete(_ call: Call, _ path: DocumentPath) async throws -> Value {
        _ = try await commitChecked([.delete(path, precondition: try FirestoreREST.precondition(call))], call)
        return .emptyMap
    }
}

fileprivate extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
