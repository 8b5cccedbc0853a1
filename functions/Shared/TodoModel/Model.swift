import Foundation
import HearthFunctions

/// The documents of the to-do app (SCENARIOS.md, "Data layout"), shared by its units. Optional
/// values are stored as explicit nulls and times are server timestamps.

/// `members/{uid}/profiles/basic`
public struct BasicProfile: Codable, Sendable, Equatable {
    public var displayName: String?
    public var email: String?
    public var providers: [String]
    @ServerTimestamp public var createdAt: Date?
    @ServerTimestamp public var updatedAt: Date?

    public init(displayName: String?, email: String?, providers: [String]) {
        self.displayName = displayName
        self.email = email
        self.providers = providers
    }
}

/// `members/{uid}/profiles/settings`
public struct Settings: Codable, Sendable, Equatable {
    public var pushEnabled: Bool
    public var reminderHour: Int
    public var reminderMinute: Int
    public var timeZone: String

    public init(pushEnabled: Bool = true, reminderHour: Int = 9, reminderMinute: Int = 0, timeZone: String) {
        self.pushEnabled = pushEnabled
        self.reminderHour = reminderHour
        self.reminderMinute = reminderMinute
        self.timeZone = timeZone
    }
}

/// A user-defined category.
public struct Category: Codable, Sendable, Equatable {
    public var id: String
    public var name: String

    public init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}

/// `members/{uid}/profiles/preferences` ("default" always exists implicitly).
public struct Preferences: Codable, Sendable, Equatable {
    public var categories: [Category]

    public init(categories: [Category] = []) { self.categories = categories }
}

/// `members/{uid}/counters/item`
public struct ItemCounter: Codable, Sendable, Equatable {
    public var nextSequence: Int

    public init(nextSequence: Int = 1) { self.nextSequence = nextSequence }
}

/// `members/{uid}/items/{itemId}`: the to-do, 13 fields.
public struct Item: Codable, Sendable, Equatable {
    public var sequence: Int
    public var title: String
    public var body: String
    public var tags: [String]
    public var category: String
    public var isDone: Bool
    public var completedAt: Date?
    public var targetDate: Date?
    @ServerTimestamp public var createdAt: Date?
    @ServerTimestamp public var updatedAt: Date?
    public var deletedAt: Date?
    public var goalId: String?
    public var priority: Int

    public init(sequence: Int, title: String, body: String = "", tags: [String] = [], category: String = "default",
                isDone: Bool = false, completedAt: Date? = nil, targetDate: Date? = nil, deletedAt: Date? = nil,
                goalId: String? = nil, priority: Int = 0) {
        self.sequence = sequence
        self.title = title
        self.body = body
        self.tags = tags
        self.category = category
        self.isDone = isDone
        self.completedAt = completedAt
        self.targetDate = targetDate
        self.deletedAt = deletedAt
        self.goalId = goalId
        self.priority = priority
    }
}

/// Where a member's documents live.
public struct MemberPaths: Sendable {
    public let uid: String

    /// Refuses uids that would escape the member's root (`/`) or are not valid document ids.
    public init(uid: String) throws {
        try Validate.identifier(uid, name: "uid")
        self.uid = uid
    }

    public var root: String { "members/\(uid)" }
    public var basic: String { "\(root)/profiles/basic" }
    public var settings: String { "\(root)/profiles/settings" }
    public var preferences: String { "\(root)/profiles/preferences" }
    public var secrets: String { "\(root)/profiles/secrets" }
    public var itemCounter: String { "\(root)/counters/item" }
    public var items: String { "\(root)/items" }
    public func item(_ id: String) throws -> String {
        try Validate.identifier(id, name: "itemId")
        return "\(items)/\(id)"
    }
    public var messages: String { "\(root)/messages" }
    public var deliveryRecords: String { "\(root)/deliveryRecords" }
    public var links: String { "\(root)/links" }
}

/// Input checks shared by the units; failures are `invalid-argument` naming the field.
public enum Validate {
    public static func identifier(_ value: String, name: String) throws {
        if value.isEmpty { throw HTTPSError(.invalidArgument, "\(name) must not be empty") }
        if value.contains("/") { throw HTTPSError(.invalidArgument, "\(name) must not contain '/'") }
        if value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw HTTPSError(.invalidArgument, "\(name) must not contain control characters")
        }
        if value == "." || value == ".." || value.utf8.count > 1500 || (value.hasPrefix("__") && value.hasSuffix("__")) {
            throw HTTPSError(.invalidArgument, "\(name) '\(value)' is not a valid document id")
        }
    }

    public static func timeZone(_ identifier: String) throws {
        guard TimeZone(identifier: identifier) != nil else {
            throw HTTPSError(.invalidArgument, "timeZone '\(identifier)' is not a known IANA time zone")
        }
    }

    public static func text(_ value: String, name: String, max: Int, allowEmpty: Bool = false) throws {
        if !allowEmpty && value.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw HTTPSError(.invalidArgument, "\(name) must not be empty")
        }
        if value.count > max { throw HTTPSError(.invalidArgument, "\(name) is longer than \(max) characters") }
    }
}

/// `members/{uid}/messages/{messageId}`: a notification record.
public struct Message: Codable, Sendable, Equatable {
    public var itemId: String
    public var title: String
    public var body: String
    public var targetDateKey: String
    public var isRead: Bool
    public var isDeleted: Bool
    @ServerTimestamp public var createdAt: Date?

    public init(itemId: String, title: String, body: String, targetDateKey: String, isRead: Bool = false, isDeleted: Bool = false) {
        self.itemId = itemId
        self.title = title
        self.body = body
        self.targetDateKey = targetDateKey
        self.isRead = isRead
        self.isDeleted = isDeleted
    }
}

/// `members/{uid}/deliveryRecords/{itemId_targetDateKey}`: one push per item and local day. The
/// id says which; `itemId` and `targetDateKey` are kept as fields too, so an item's records can be
/// found with a query.
public struct DeliveryRecord: Codable, Sendable, Equatable {
    public var itemId: String
    public var targetDateKey: String
    /// `claimed` once a task took it, `sending` while its push is sent, then `sent`; or `noToken`,
    /// `tokenRemoved`, `refused` when the push could not or need not go out.
    public var state: String
    @ServerTimestamp public var createdAt: Date?
    public var sentAt: Date?

    public init(itemId: String, targetDateKey: String, state: String = "claimed", sentAt: Date? = nil) {
        self.itemId = itemId
        self.targetDateKey = targetDateKey
        self.state = state
        self.sentAt = sentAt
    }

    public static func id(itemId: String, targetDateKey: String) -> String { "\(itemId)_\(targetDateKey)" }
}

/// `members/{uid}/links/{linkId}`: a saved web page.
public struct Link: Codable, Sendable, Equatable {
    public var url: String
    public var title: String
    public var isDeleted: Bool
    @ServerTimestamp public var createdAt: Date?

    public init(url: String, title: String, isDeleted: Bool = false) {
        self.url = url
        self.title = title
        self.isDeleted = isDeleted
    }
}

/// `members/{uid}/profiles/secrets` (server-only).
public struct Secrets: Codable, Sendable, Equatable {
    public var fcmToken: String?
    public var appleRefreshToken: String?
    public var githubAccessToken: String?

    public init(fcmToken: String? = nil, appleRefreshToken: String? = nil, githubAccessToken: String? = nil) {
        self.fcmToken = fcmToken
        self.appleRefreshToken = appleRefreshToken
        self.githubAccessToken = githubAccessToken
    }
}

/// Task ids that are the same every time one event asks for one piece of work, so a retried
/// trigger enqueues nothing twice (the queue refuses a known id): 32 hex digits from two FNV-1a
/// hashes of the parts.
public enum StableID {
    public static func of(_ parts: String...) -> String {
        let text = Array(parts.joined(separator: "\u{1F}").utf8)
        func fnv(_ seed: UInt64) -> UInt64 {
            var h = seed
            for b in text { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
            return h
        }
        let bytes = [fnv(0xcbf2_9ce4_8422_2325), fnv(0x84222325_cbf29ce4)].flatMap { h in (0..<8).map { UInt8(truncatingIfNeeded: h >> (56 - 8 * $0)) } }
        return Hex.encode(bytes)
    }
}

extension MemberPaths {
    public func message(_ id: String) throws -> String {
        try Validate.identifier(id, name: "messageId")
        return "\(messages)/\(id)"
    }
    public func link(_ id: String) throws -> String {
        try Validate.identifier(id, name: "linkId")
        return "\(links)/\(id)"
    }
    public func deliveryRecord(_ id: String) throws -> String {
        try Validate.identifier(id, name: "deliveryRecordId")
        return "\(deliveryRecords)/\(id)"
    }
}
