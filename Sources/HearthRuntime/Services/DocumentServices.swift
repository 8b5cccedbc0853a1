import HearthModel
import HearthStore

/// The document and transaction services: the document store as units reach it. Batches and
/// transactions may carry task enqueues, committed with their writes or not at all.
enum DocumentServices {
    static func register(_ services: inout HostServices.Builder, store: DocumentStore, tasks: TaskRequests) {
        services.serve(Boundary.GetDocuments.self) { _, request in
            try await store.getAll(request.paths)
        }
        // Answered from the writer's thread after the COMMIT (see `HostServices.Builder.complete`).
        services.complete(Boundary.Commit.self) { _, request, done in
            store.commit(request.writes, enqueues: try tasks.check(request.enqueues), done: done)
        }
        services.serve(Boundary.RunQuery.self) { _, request in
            try await store.query(try unitQuery(request.query))
        }
        services.serve(Boundary.CountQuery.self) { _, request in
            Int64(try await store.count(try unitQuery(request.query)))
        }
        services.serve(Boundary.ListCollections.self) { _, request in
            try await store.listCollections(under: request.parent)
        }
        services.serve(Boundary.ListDocuments.self) { _, request in
            try await store.listDocuments(in: request.collection)
        }
        services.serve(Boundary.RecursiveDelete.self) { _, request in
            let segments = try PathRules.segments(request.path, document: nil)
            guard (1...500).contains(request.batchSize) else {
                throw HTTPSError.invalidArgument("batchSize must be between 1 and 500 (got \(request.batchSize))")
            }
            return Int64(try await store.recursiveDelete(segments, batchSize: request.batchSize))
        }
        services.serve(Boundary.BeginTransaction.self) { caller, _ in
            store.transactions.begin(owner: caller.invocation)
        }
        services.serve(Boundary.TransactionGet.self) { caller, request in
            try await store.transactions.get(request.transaction, request.paths, caller: caller.invocation)
        }
        services.serve(Boundary.TransactionQuery.self) { caller, request in
            try await store.transactions.query(request.transaction, try unitQuery(request.query), caller: caller.invocation)
        }
        services.serve(Boundary.CommitTransaction.self) { caller, request in
            try await store.transactions.commit(request.transaction, request.writes, enqueues: try tasks.check(request.enqueues),
                                                caller: caller.invocation)
        }
        services.serve(Boundary.RollbackTransaction.self) { caller, request in
            store.transactions.rollback(request.transaction, caller: caller.invocation)
            return Boundary.Empty()
        }
    }

    /// A unit's query, which names its collection: the SDK has no kindless query (units delete a
    /// tree with `recursiveDelete`), so an empty collection id is the mistake it always was, not a
    /// read of every collection.
    static func unitQuery(_ spec: QuerySpec) throws(HTTPSError) -> QuerySpec {
        if spec.isKindless { throw .invalidArgument("a query needs a collection id (got an empty one)") }
        return spec
    }
}
