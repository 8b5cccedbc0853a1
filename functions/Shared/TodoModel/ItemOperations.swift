import Foundation
import HearthFunctions

// Item operations shared by the callables (Items) and the HTTP API (AppAPI): numbering, updates,
// soft delete with the item's messages.

/// A new item's fields (the id is generated when not given).
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

    public init(itemId: String? = nil, title: String, body: String? = nil, tags: [String]? = nil, category: String? = nil,
                targetDate: Date? = nil, goalId: String? = nil, priority: Int? = nil) {
        self.itemId = itemId
        self.title = title
        self.body = body
        self.tags = tags
        self.category = category
        self.targetDate = targetDate
        self.goalId = goalId
        self.priority = priority
    }
}

/// Fields to change; nil leaves a field as it is.
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

    public init(itemId: String, title: String? = nil, body: String? = nil, tags: [String]? = nil, category: String? = nil, isDone: Bool? = nil,
                targetDate: Date? = nil, clearTargetDate: Bool? = nil, goalId: String? = nil, priority: Int? = nil) {
        self.itemId = itemId
        self.title = title
        self.body = body
        self.tags = tags
        self.category = category
        self.isDone = isDone
        self.targetDate = targetDate
        self.clearTargetDate = clearTargetDate
        self.goalId = goalId
        self.priority = priority
    }
}

public struct ItemReply: Codable, Sendable, Equatable {
    public var itemId: String
    public var sequence: Int

    public init(itemId: String, sequence: Int) {
        self.itemId = itemId
        self.sequence = sequence
    }
}


public struct DeleteReply: Codable, Sendable, Equatable {
    /// The item's messages marked (or unmarked) with it.
    public var messages: Int

    public init(messages: Int) { self.messages = messages }
}


public enum ItemOperations {
    /// Takes the next number from `counters/item` and creates the item in one transaction, so two
    /// devices creating items at once never get the same number (the counter is locked by the read).
    public static func create(_ input: CreateItem, paths: MemberPaths, docs: Documents) async throws -> ItemReply {
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
    public static func update(_ input: UpdateItem, paths: MemberPaths, docs: Documents) async throws -> ItemReply {
        if let title = input.title { try Validate.text(title, name: "title", max: 500) }
        if let category = input.category { try Validate.identifier(category, name: "category") }
        let ref = try docs.document(try paths.item(input.itemId))
        return try await docs.runTransaction { tx in
            // Read as stored, not as `Item`: a compacted item (8 fields) is still updatable.
            guard let item = try await tx.get(ref, [String: Value].self)?.data else {
                throw HTTPSError(.notFound, "no item \(input.itemId)")
            }
            let isDone = item["isDone"]?.boolValue ?? false
            let sequence = Int(clamping: item["sequence"]?.intValue ?? 0)
            var fields: [String: FieldValue] = ["updatedAt": .serverTimestamp()]
            if let v = input.title { fields["title"] = .value(.string(v)) }
            if let v = input.body { fields["body"] = .value(.string(v)) }
            if let v = input.tags { fields["tags"] = .value(.array(v.map { .string($0) })) }
            if let v = input.category { fields["category"] = .value(.string(v)) }
            if let v = input.goalId { fields["goalId"] = .value(.string(v)) }
            if let v = input.priority { fields["priority"] = .value(.int(Int64(v))) }
            if let v = input.targetDate { fields["targetDate"] = try .value(v) }
            if input.clearTargetDate == true { fields["targetDate"] = FieldValue.null }
            if let done = input.isDone, done != isDone {
                fields["isDone"] = .value(.bool(done))
                fields["completedAt"] = done ? .serverTimestamp() : FieldValue.null
            }
            try tx.update(ref, fields)
            return ItemReply(itemId: ref.id, sequence: sequence)
        }
    }
    /// Marks or unmarks an item deleted, with its messages, in one transaction: all or nothing.
    /// The item must exist (`not-found`) and not already be in that state (`failed-precondition`).
    public static func setItemDeleted(_ deleted: Bool, _ itemId: String, paths: MemberPaths, docs: Documents) async throws -> DeleteReply {
        let ref = try docs.document(try paths.item(itemId))
        let messages = try docs.collection(paths.messages).whereField("itemId", isEqualTo: itemId)
        return try await docs.runTransaction { tx in
            guard let item = try await tx.get(ref, [String: Value].self) else { throw HTTPSError(.notFound, "no item \(itemId)") }
            let isDeleted = !(item.data["deletedAt"]?.isNull ?? true)
            if isDeleted == deleted {
                throw HTTPSError(.failedPrecondition, deleted ? "the item is already deleted" : "the item is not deleted")
            }
            let found = try await tx.getDocuments(messages, [String: Value].self)
            var fields: [String: FieldValue] = ["deletedAt": deleted ? .serverTimestamp() : FieldValue.null, "updatedAt": .serverTimestamp()]
            if !deleted {
                // A compacted item comes back with the fields compaction dropped, at their defaults.
                let defaults: [String: Value] = ["body": "", "tags": [], "completedAt": .null, "priority": 0]
                for (name, value) in defaults where item.data[name] == nil { fields[name] = .value(value) }
            }
            try tx.update(ref, fields)
            for message in found { try tx.update(docs.document(message.path), ["isDeleted": .value(.bool(deleted))]) }
            return DeleteReply(messages: found.count)
        }
    }

    /// `isDeleted` on a message or link: it must exist and not already be in that state.
    public static func setFlag(_ deleted: Bool, _ ref: DocumentReference, what: String, docs: Documents) async throws {
        try await docs.runTransaction { tx in
            guard let doc = try await tx.get(ref, [String: Value].self) else { throw HTTPSError(.notFound, "no \(what) \(ref.id)") }
            if (doc.data["isDeleted"]?.boolValue ?? false) == deleted {
                throw HTTPSError(.failedPrecondition, deleted ? "the \(what) is already deleted" : "the \(what) is not deleted")
            }
            try tx.update(ref, ["isDeleted": .value(.bool(deleted))])
        }
    }

}
