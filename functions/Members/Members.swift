import Foundation
import HearthFunctions
import TodoModel

/// First sign-in setup (SCENARIOS §2): a member's default documents, created exactly once.
public enum Members: FunctionModule {
    public static let name = "Members"

    public struct InitializeRequest: Codable, Sendable {
        /// The device's IANA time zone (`Asia/Seoul`), used for reminders.
        public var timeZone: String
        public var displayName: String?
    }

    public struct InitializeResponse: Codable, Sendable, Equatable {
        /// True when this call created the documents; false when they already existed.
        public var created: Bool
    }

    public static func register(_ fn: inout FunctionRegistry) {
        fn.onCall("initializeMember") { (req: CallableRequest<InitializeRequest>) -> InitializeResponse in
            let auth = try req.requireAuth()
            try Validate.timeZone(req.data.timeZone)
            if let name = req.data.displayName { try Validate.text(name, name: "displayName", max: 200, allowEmpty: true) }
            return InitializeResponse(created: try await initialize(req, auth: auth))
        }

        // The device's FCM token (the app's token sync): stored server-only, replaced when it
        // rotates, removed on sign-out. The token comes in the body, or as the callable
        // protocol's `Firebase-Instance-ID-Token` header.
        fn.onCall("registerDevice") { (req: CallableRequest<DeviceToken>) -> Value in
            let auth = try req.requireAuth()
            guard let token = req.data.fcmToken ?? req.instanceIdToken, !token.isEmpty else {
                throw HTTPSError(.invalidArgument, "fcmToken is required")
            }
            try Validate.text(token, name: "fcmToken", max: 4096)
            let paths = try MemberPaths(uid: auth.uid)
            _ = try await req.documents.document(paths.secrets).set(["fcmToken": .string(token)] as [String: Value], merge: true)
            return .null
        }

        // Sign-out: the token is removed, unless another device registered since (a token given
        // must be the stored one).
        fn.onCall("unregisterDevice") { (req: CallableRequest<DeviceToken>) -> Value in
            let auth = try req.requireAuth()
            let ref = try req.documents.document(try MemberPaths(uid: auth.uid).secrets)
            let given = req.data.fcmToken ?? req.instanceIdToken
            try await req.documents.runTransaction { tx in
                guard let stored = try await tx.get(ref, Secrets.self)?.data.fcmToken else { return }
                if let given, given != stored { return }
                try tx.update(ref, ["fcmToken": FieldValue.null])
            }
            return .null
        }

        // The device's time zone moved (travel, a setting): reminders follow from the next tick.
        fn.onCall("updateTimeZone") { (req: CallableRequest<TimeZoneRequest>) -> Value in
            let auth = try req.requireAuth()
            try Validate.timeZone(req.data.timeZone)
            let ref = try req.documents.document(try MemberPaths(uid: auth.uid).settings)
            do {
                _ = try await ref.update(["timeZone": .value(.string(req.data.timeZone))])
            } catch let error as HTTPSError where error.code == .notFound {
                throw HTTPSError(.failedPrecondition, "the member is not initialized; call initializeMember first")
            }
            return .null
        }
    }

    public struct DeviceToken: Codable, Sendable {
        public var fcmToken: String?
    }

    public struct TimeZoneRequest: Codable, Sendable {
        public var timeZone: String
    }

    /// Reads the default documents in a transaction and creates the missing ones: a repeat (or a
    /// concurrent call from a second device) finds them and writes nothing.
    static func initialize(_ req: CallableRequest<InitializeRequest>, auth: AuthData) async throws -> Bool {
        let docs = req.documents
        let paths = try MemberPaths(uid: auth.uid)
        let basic = try docs.document(paths.basic)
        let settings = try docs.document(paths.settings)
        let preferences = try docs.document(paths.preferences)
        let counter = try docs.document(paths.itemCounter)
        let providers = Array((auth.token["firebase"]?["identities"]?.mapValue ?? [:]).keys).sorted()
        return try await docs.runTransaction { tx in
            var missing: [DocumentReference] = []
            for ref in [basic, settings, preferences, counter] where try await !tx.exists(ref) {
                missing.append(ref)
            }
            for ref in missing {
                switch ref {
                case basic:
                    try tx.create(ref, BasicProfile(displayName: req.data.displayName ?? auth.token["name"]?.stringValue,
                                                    email: auth.email, providers: providers.isEmpty ? [auth.signInProvider ?? "custom"] : providers))
                case settings:
                    try tx.create(ref, Settings(timeZone: req.data.timeZone))
                case preferences:
                    try tx.create(ref, Preferences())
                default:
                    try tx.create(ref, ItemCounter())
                }
            }
            return !missing.isEmpty
        }
    }
}
