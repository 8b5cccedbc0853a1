import HearthModel
import HearthStore

/// The `docs.*` and `tx.*` host services: the document store as units reach it. Batches and
/// transactions may carry task `enqueues`, committed with their writes or not at all.
enum DocumentServices {
    static func handlers(store: DocumentStore, tasks: TaskRequests) -> [String: HostServices.AsyncHandler] {
        [
            "docs.get": { request in
                let paths = try paths(request)
                return .array(try await store.getAll(paths).map { $0?.value ?? .null })
            },
            "docs.commit": { request in
                try encode(try await store.commit(try writes(request), enqueues: try tasks.parseList(request.arguments["enqueues"])))
            },
            "docs.query": { request in
                .array(try await store.query(try query(request)).map(\.value))
            },
            "docs.count": { request in
                .int(Int64(try await store.count(try query(request))))
            },
            "docs.listCollections": { request in
                let parent = try request.arguments["parent"]?.stringValue.map { try DocumentPath($0) }
                return .array(try await store.listCollections(under: parent).map { .string($0.description) })
            },
            "docs.listDocuments": { request in
                let collection = try CollectionPath(try request.string("collection"))
                return .array(try await store.listDocuments(in: collection).map { ["path": .string($0.path.description), "exists": .bool($0.exists)] })
            },
            "docs.recursiveDelete": { request in
                let path = try request.string("path")
                let segments = try PathRules.segments(path, document: nil)
                let batch = Int(request.arguments["batchSize"]?.intValue ?? 500)
                guard (1...500).contains(batch) else { throw HTTPSError.invalidArgument("batchSize must be between 1 and 500 (got \(batch))") }
                return .int(Int64(try await store.recursiveDelete(segments, batchSize: batch)))
            },
            "tx.begin": { request in
                .int(Int64(bitPattern: store.transactions.begin(owner: request.invocation)))
            },
            "tx.get": { request in
                .array(try await store.transactions.get(try txn(request), try paths(request), caller: request.invocation).map { $0?.value ?? .null })
            },
            "tx.query": { request in
                .array(try await store.transactions.query(try txn(request), try query(request), caller: request.invocation).map(\.value))
            },
            "tx.commit": { request in
                try encode(try await store.transactions.commit(try txn(request), try writes(request),
                                                               enqueues: try tasks.parseList(request.arguments["enqueues"]), caller: request.invocation))
            },
            "tx.rollback": { request in
                store.transactions.rollback(try txn(request), caller: request.invocation)
                return .null
            },
        ]
    }

    static func paths(_ request: HostRequest) throws -> [DocumentPath] {
        guard case .array(let items)? = request.arguments["paths"] else { throw HTTPSError.invalidArgument("\(request.op): missing 'paths'") }
        return try items.map { item in
            guard let s = item.stringValue else { throw HTTPSError.invalidArgument("\(request.op): a path must be a string") }
            return try DocumentPath(s)
        }
    }

    static func writes(_ request: HostRequest) throws -> [DocumentWrite] {
        guard case .array(let items)? = request.arguments["writes"] else { throw HTTPSError.invalidArgument("\(request.op): missing 'writes'") }
        return try items.map { try decode(DocumentWrite.self, $0, what: "write") }
    }

    static func query(_ request: HostRequest) throws -> QuerySpec {
        try decode(QuerySpec.self, request.arguments["query"] ?? .null, what: "query")
    }

    static func txn(_ request: HostRequest) throws -> UInt64 {
        guard let id = request.arguments["txn"]?.intValue else { throw HTTPSError.invalidArgument("\(request.op): missing 'txn'") }
        return UInt64(bitPattern: id)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ value: Value, what: String) throws -> T {
        do { return try ValueDecoder().decode(type, from: value) } catch let error as HTTPSError {
            throw error
        } catch {
            throw HTTPSError.invalidArgument("malformed \(what): \(describeDecodingError(error))")
        }
    }

    static func encode(_ result: CommitResult) throws -> Value { try ValueEncoder().encode(result) }
}
