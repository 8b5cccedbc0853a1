import Foundation
import HearthFunctions
import TodoModel

/// Category clean-up (SCENARIOS §5): a category removed from a member's preferences hands its items
/// back to `"default"`, through a task per removed category.
public enum CategoryCleanup: FunctionModule {
    public static let name = "CategoryCleanup"

    public struct CleanupCategory: Codable, Sendable, Equatable {
        public var userId: String
        public var categoryId: String

        public init(userId: String, categoryId: String) {
            self.userId = userId
            self.categoryId = categoryId
        }
    }

    /// Items moved per batch (one commit each).
    static let batchSize = 200

    public static func register(_ fn: inout FunctionRegistry) {
        fn.onDocumentUpdated("onPreferencesUpdated", .init(document: "members/{uid}/profiles/preferences", retry: true)) { (event: DocumentEvent<[String: Value]>) in
            guard let uid = event.params["uid"] else { return }
            let removed = categoryIDs(event.before?.data).subtracting(categoryIDs(event.after?.data)).subtracting(["default"])
            // One task per removed category, with an id made from the event and the category: a
            // retried trigger asks for the same tasks, which the queue already has.
            let queue = event.tasks.queue("cleanupCategory")
            for categoryId in removed.sorted() {
                do {
                    _ = try await queue.enqueue(CleanupCategory(userId: uid, categoryId: categoryId),
                                                options: TaskOptions(id: StableID.of(event.id, categoryId)))
                } catch let error as HTTPSError where error.code == .alreadyExists {
                    continue
                }
            }
        }

        fn.onTaskDispatched("cleanupCategory", .init(retry: .exponential(maxAttempts: 5), rateLimits: .init(maxConcurrentDispatches: 10))) {
            (req: TaskRequest<CleanupCategory>) in
            // A payload that can never work is not retried: its attempt ends quietly, logged.
            guard (try? Validate.identifier(req.data.categoryId, name: "categoryId")) != nil, let paths = try? MemberPaths(uid: req.data.userId) else {
                req.logger.warning("cleanupCategory: invalid payload", ["userId": .string(req.data.userId), "categoryId": .string(req.data.categoryId)])
                return
            }
            guard req.data.categoryId != "default" else { return }
            // Removed and added back (an undo) before the task ran: the items stay where they are.
            let preferences = try await req.documents.document(paths.preferences).get([String: Value].self)?.data
            if categoryIDs(preferences).contains(req.data.categoryId) { return }
            let moved = try await moveItems(of: paths, from: req.data.categoryId, docs: req.documents)
            req.logger.info("category cleaned up", ["userId": .string(req.data.userId), "categoryId": .string(req.data.categoryId),
                                                              "moved": .int(Int64(moved))])
        }
    }

    /// The ids in a preferences document (`categories: [{id, name}]`); malformed entries are skipped.
    static func categoryIDs(_ fields: [String: Value]?) -> Set<String> {
        Set((fields?["categories"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue })
    }

    /// Moves the member's items in `category` to "default", a batch at a time, until none is left.
    /// Each batch commits on its own, so an attempt that fails part-way leaves only the rest for
    /// its retry, and a second run finds nothing to move.
    static func moveItems(of paths: MemberPaths, from category: String, docs: Documents) async throws -> Int {
        let query = try docs.collection(paths.items).whereField("category", isEqualTo: category).limit(to: batchSize)
        var moved = 0
        while true {
            let page = try await query.getDocuments([String: Value].self)
            if page.isEmpty { return moved }
            let batch = docs.batch()
            for item in page {
                try batch.update(docs.document(item.path), ["category": .value(.string("default")), "updatedAt": .serverTimestamp()])
            }
            _ = try await batch.commit()
            moved += page.count
        }
    }
}
