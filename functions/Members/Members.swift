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
