/// A push to one device, in the shape of FCM HTTP v1's `Message` (token, notification, data, the
/// APNs badge and sound).
public struct PushMessage: Sendable, Hashable {
    /// The FCM registration token.
    public var token: String
    public var title: String?
    public var body: String?
    /// String pairs delivered to the app.
    public var data: [String: String]
    /// The app icon's badge (APNs `aps.badge`).
    public var badge: Int?
    /// APNs `aps.sound` (`"default"`).
    public var sound: String?

    public init(token: String, title: String? = nil, body: String? = nil, data: [String: String] = [:], badge: Int? = nil, sound: String? = nil) {
        self.token = token
        self.title = title
        self.body = body
        self.data = data
        self.badge = badge
        self.sound = sound
    }

    /// FCM's limit on a message (4096 bytes of payload); checked before sending.
    public static let maxPayloadBytes = 4096

    /// Refusals before anything is sent: `invalid-argument` naming what is wrong.
    public func check() throws(HTTPSError) {
        if token.isEmpty || token.utf8.count > 4096 { throw .invalidArgument("the registration token must be 1 to 4096 bytes") }
        if let badge, badge < 0 || badge > 1_000_000 { throw .invalidArgument("badge must be between 0 and 1000000") }
        let size = (title?.utf8.count ?? 0) + (body?.utf8.count ?? 0) + data.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
        if size > PushMessage.maxPayloadBytes { throw .invalidArgument("the message is \(size) bytes; FCM allows \(PushMessage.maxPayloadBytes)") }
        for key in data.keys where key.isEmpty || key.hasPrefix("google.") || key.hasPrefix("gcm.") || key == "from" || key == "message_type" {
            throw .invalidArgument("data key '\(key)' is reserved by FCM")
        }
    }
}

/// A push as the `log` messaging mode (or the FCM mode, after sending) recorded it in the outbox.
public struct OutboxEntry: Sendable, Hashable {
    public var sequence: Int64
    public var time: Timestamp
    /// The function that sent it.
    public var function: String
    public var message: PushMessage
    /// `logged` (log mode), `sent` (FCM accepted it: `messageID`), or the refusal.
    public var outcome: String
    public var messageID: String?

    public init(sequence: Int64, time: Timestamp, function: String, message: PushMessage, outcome: String, messageID: String?) {
        self.sequence = sequence
        self.time = time
        self.function = function
        self.message = message
        self.outcome = outcome
        self.messageID = messageID
    }
}

/// Where pushes are recorded: the runtime's database.
public protocol OutboxStorage: Sendable {
    /// Appends an entry (its sequence is assigned) and returns its sequence.
    func record(time: Timestamp, function: String, message: PushMessage, outcome: String, messageID: String?) async throws -> Int64
    /// Entries after `sequence`, oldest first.
    func entries(after sequence: Int64, limit: Int) throws -> [OutboxEntry]
}
