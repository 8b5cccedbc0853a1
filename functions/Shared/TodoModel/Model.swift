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
