import Foundation
import HearthFunctions
import TodoModel

/// Account deletion (SCENARIOS §6): when a user is deleted from auth, everything under
/// `members/{uid}` goes, at every depth.
public enum AccountCleanup: FunctionModule {
    public static let name = "AccountCleanup"

    public static func register(_ fn: inout FunctionRegistry) {
        // Retried: the recursive delete commits in batches of 500, leaves first, so a run that
        // dies half-way leaves a smaller tree that the retry finishes; deleting again is harmless.
        fn.onUserDeleted("deleteMemberData", .init(retry: true, timeout: .seconds(540))) { event in
            guard let paths = try? MemberPaths(uid: event.user.uid) else {
                // A uid no member root can have (initializeMember refuses it): nothing to delete.
                event.logger.warning("no member data can exist for this uid", ["uid": .string(event.user.uid)])
                return
            }
            let deleted = try await event.documents.recursiveDelete(try event.documents.document(paths.root))
            event.logger.info("member data deleted", ["uid": .string(event.user.uid), "documents": .int(Int64(deleted))])
        }
    }
}
