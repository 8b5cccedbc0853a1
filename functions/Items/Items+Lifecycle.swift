import Foundation
import HearthFunctions
import TodoModel

/// Soft delete and undo, the triggers that follow an item's end, and the daily purge (SCENARIOS §3).
extension Items {
    public struct ItemID: Codable, Sendable { public var itemId: String }
    public struct MessageID: Codable, Sendable { public var messageId: String }
    public struct LinkID: Codable, Sendable { public var linkId: String }

    /// The purge: every day at 09:00 in Seoul.
    public static let purgeSchedule = ScheduleOptions(schedule: "0 9 * * *", timeZone: "Asia/Seoul", retry: true, timeout: .seconds(900))
    /// Items deleted longer ago than this are compacted.
    public static let compactAfter: Duration = .seconds(24 * 3600)
    /// The fields a compacted item keeps.
    public static let compactFields = ["sequence", "title", "category", "isDone", "targetDate", "createdAt", "deletedAt", "goalId"]
    static let pageSize = 300

    static func registerLifecycle(_ fn: inout FunctionRegistry) {
        fn.onCall("deleteItem") { (req: CallableRequest<ItemID>) -> DeleteReply in
            let auth = try req.requireAuth()
            return try await ItemOperations.setItemDeleted(true, req.data.itemId, paths: try MemberPaths(uid: auth.uid), docs: req.documents)
        }
        fn.onCall("restoreItem") { (req: CallableRequest<ItemID>) -> DeleteReply in
            let auth = try req.requireAuth()
            return try await ItemOperations.setItemDeleted(false, req.data.itemId, paths: try MemberPaths(uid: auth.uid), docs: req.documents)
        }
        fn.onCall("deleteMessage") { (req: CallableRequest<MessageID>) -> Value in
            let paths = try MemberPaths(uid: try req.requireAuth().uid)
            try await ItemOperations.setFlag(true, try req.documents.document(try paths.message(req.data.messageId)), what: "message", docs: req.documents)
            return .null
        }
        fn.onCall("restoreMessage") { (req: CallableRequest<MessageID>) -> Value in
            let paths = try MemberPaths(uid: try req.requireAuth().uid)
            try await ItemOperations.setFlag(false, try req.documents.document(try paths.message(req.data.messageId)), what: "message", docs: req.documents)
            return .null
        }
        fn.onCall("deleteLink") { (req: CallableRequest<LinkID>) -> Value in
            let paths = try MemberPaths(uid: try req.requireAuth().uid)
            try await ItemOperations.setFlag(true, try req.documents.document(try paths.link(req.data.linkId)), what: "link", docs: req.documents)
            return .null
        }
        fn.onCall("restoreLink") { (req: CallableRequest<LinkID>) -> Value in
            let paths = try MemberPaths(uid: try req.requireAuth().uid)
            try await ItemOperations.setFlag(false, try req.documents.document(try paths.link(req.data.linkId)), what: "link", docs: req.documents)
            return .null
        }

        // An item really deleted takes its messages and delivery records with it.
        fn.onDocumentDeleted("onItemDeleted", .init(document: "members/{uid}/items/{itemId}", retry: true)) { (event: DocumentEvent<[String: Value]>) in
            guard let uid = event.params["uid"], let itemId = event.params["itemId"], let paths = try? MemberPaths(uid: uid) else { return }
            let docs = event.documents
            for collection in [paths.messages, paths.deliveryRecords] {
                try await deleteAll(try docs.collection(collection).whereField("itemId", isEqualTo: itemId), docs: docs)
            }
        }

        // An item completed after its due date no longer needs its delivery records.
        fn.onDocumentUpdated("onItemCompleted", .init(document: "members/{uid}/items/{itemId}", retry: true)) { (event: DocumentEvent<[String: Value]>) in
            guard let uid = event.params["uid"], let itemId = event.params["itemId"], let paths = try? MemberPaths(uid: uid) else { return }
            let wasDone = event.before?.data["isDone"]?.boolValue ?? false
            let isDone = event.after?.data["isDone"]?.boolValue ?? false
            guard !wasDone, isDone, case .timestamp(let due)? = event.after?.data["targetDate"], due < event.time else { return }
            try await deleteAll(try event.documents.collection(paths.deliveryRecords).whereField("itemId", isEqualTo: itemId), docs: event.documents)
        }

        fn.onSchedule("purgeDeleted", purgeSchedule) { event in
            let docs = event.documents
            var removed = 0
            for group in ["messages", "links"] {
                removed += try await deleteAll(try docs.collectionGroup(group).whereField("isDeleted", isEqualTo: true), docs: docs)
            }
            let compacted = try await compactDeletedItems(before: event.scheduleTime - compactAfter, docs: docs)
            event.logger.info("purge", ["removed": .int(Int64(removed)), "compacted": .int(Int64(compacted))])
        }
    }

    /// Deletes what `query` finds, a page per transaction, until it finds nothing; returns how
    /// many. The page is read in the transaction, so a document changed meanwhile (a message
    /// restored while the purge runs) makes it run again on what the query finds then.
    @discardableResult
    static func deleteAll(_ query: Query, docs: Documents) async throws -> Int {
        var deleted = 0
        let page = query.limit(to: pageSize)
        while true {
            let count = try await docs.runTransaction { tx -> Int in
                let found = try await tx.getDocuments(page, [String: Value].self)
                for doc in found { try tx.delete(docs.document(doc.path)) }
                return found.count
            }
            if count == 0 { return deleted }
            deleted += count
        }
    }

    /// Items deleted before `cutoff` keep only `compactFields`; ones already compact are left
    /// alone, so the purge can run again (or twice) with no effect.
    static func compactDeletedItems(before cutoff: Timestamp, docs: Documents) async throws -> Int {
        var compacted = 0
        var query = try docs.collectionGroup("items").whereField("deletedAt", isLessThan: cutoff).order(by: "deletedAt").limit(to: pageSize)
        while true {
            // Read and rewritten in one transaction: an item restored meanwhile is not compacted.
            let (last, writes) = try await docs.runTransaction { tx -> (DocumentSnapshot<[String: Value]>?, Int) in
                let found = try await tx.getDocuments(query, [String: Value].self)
                var writes = 0
                for item in found where Set(item.data.keys) != Set(compactFields) {
                    var kept: [String: Value] = [:]
                    for field in compactFields { kept[field] = item.data[field] ?? .null }
                    try tx.set(docs.document(item.path), kept)
                    writes += 1
                }
                return (found.last, writes)
            }
            guard let last else { return compacted }
            compacted += writes
            query = query.start(afterDocument: last)
        }
    }
}
