import Foundation
import HearthFunctions
import TodoModel

/// To-do items (SCENARIOS §3): numbering from the member's counter, kept on update.
public enum Items: FunctionModule {
    public static let name = "Items"

    public struct CreateItem: Codable, Sendable {
        /// Optional client-chosen id (no '/'); a random one otherwise.
        public var itemId: String?
        public var title: String
        public var body: String?
        public var tags: [String]?
        public var category: String?
        public var targetDate: Date?
        public var goalId: String?
        public var priority: Int?
    }

    public struct UpdateItem: Codable, Sendable {
        public var itemId: String
        public var title: String?
        public var body: String?
        public var tags: [String]?
        public var category: String?
        public var isDone: Bool?
        public var targetDate: Date?
        /// Set true to clear the due date (a nil `targetDate` leaves it as it is).
        public var clearTargetDate: Bool?
        public var goalId: String?
        public var priority: Int?
    }

    public struct ItemReply: Codable, Sendable, Equatable {
        public var itemId: String
        public var sequence: Int
    }

    public static func register(_ fn: inout FunctionRegistry) {
        fn.onCall("createItem") { (req: CallableRequest<CreateItem>) -> ItemReply in
            let auth = try req.requireAuth()
            return try await create(req.data, paths: try MemberPaths(uid: auth.uid), docs: req.documents)
        }

        fn.onCall("updateItem") { (req: CallableRequest<UpdateItem>) -> ItemReply in
            let auth = try req.requireAuth()
            return try await update(req.data, paths: try MemberPaths(uid: auth.uid), docs: req.documents)
        }

        registerLifecycle(&fn)
    }

    /// Takes the next number from `counters/item` and creates the item in one transaction, so two
    /// devices creating items at once never get the same number (the counter is locked by the read).
    static func create(_ input: CreateItem, paths: MemberPaths, docs: Documents) async throws -> ItemReply {
        try Validate.text(input.title, name: "title", max: 500)
        if let id = input.itemId { try Validate.identifier(id, name: "itemId") }
        if let category = input.category { try Validate.identifier(category, name: "category") }
        let counterRef = try docs.document(paths.itemCounter)
        let itemRef = try input.itemId.map { try docs.document(paths.item($0)) } ?? (try docs.collection(paths.items).document())
        let sequence = try await docs.runTransaction { tx -> Int in
            guard let counter = try await tx.get(counterRef, ItemCounter.self)?.data else {
                throw HTTPSError(.failedPrecondition, "the member is not initialized; call initializeMember first")
            }
            let item = Item(sequence: counter.nextSequence, title: input.title, body: input.body ?? "", tags: input.tags ?? [],
                            category: input.category ?? "default", targetDate: input.targetDate, goalId: input.goalId,
                            priority: input.priority ?? 0)
            try tx.create(itemRef, item)
            let (next, overflow) = counter.nextSequence.addingReportingOverflow(1)
            if overflow { throw HTTPSError(.resourceExhausted, "the member's item counter is exhausted") }
            try tx.update(counterRef, ["nextSequence": .value(.int(Int64(next)))])
            return counter.nextSequence
        }
        return ItemReply(itemId: itemRef.id, sequence: sequence)
    }

    /// Changes the given fields; the item keeps its number. `isDone` true records `completedAt`.
    static func update(_ input: UpdateItem, paths: MemberPaths, docs: Documents) async throws -> ItemReply {
        if let title = input.title { try Validate.text(title, name: "title", max: 500) }
        if let category = input.category { try Validate.identifier(category, name: "category") }
        let ref = try docs.document(try paths.item(input.itemId))
        return try await docs.runTransaction { tx in
            guard let item = try await tx.get(ref, Item.self)?.data else {
                throw HTTPSError(.notFound, "no item \(input.itemId)")
            }
            var fields: [String: FieldValue] = ["updatedAt": .serverTimestamp()]
            if let v = input.title { fields["title"] = .value(.string(v)) }
            if let v = input.body { fields["body"] = .value(.string(v)) }
            if let v = input.tags { fields["tags"] = .value(.array(v.map { .string($0) })) }
            if let v = input.category { fields["category"] = .value(.string(v)) }
            if let v = input.goalId { fields["goalId"] = .value(.string(v)) }
            if let v = input.priority { fields["priority"] = .value(.int(Int64(v))) }
            if let v = input.targetDate { fields["targetDate"] = try .value(v) }
            if input.clearTargetDate == true { fields["targetDate"] = FieldValue.null }
            if let done = input.isDone, done != item.isDone {
                fields["isDone"] = .value(.bool(done))
                fields["completedAt"] = done ? .serverTimestamp() : FieldValue.null
            }
            try tx.update(ref, fields)
            return ItemReply(itemId: ref.id, sequence: item.sequence)
        }
    }
}
