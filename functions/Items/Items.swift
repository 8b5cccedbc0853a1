import Foundation
import HearthFunctions
import TodoModel

/// To-do items (SCENARIOS §3): numbering from the member's counter, kept on update.
public enum Items: FunctionModule {
    public static let name = "Items"

    public static func register(_ fn: inout FunctionRegistry) {
        fn.onCall("createItem") { (req: CallableRequest<CreateItem>) -> ItemReply in
            let auth = try req.requireAuth()
            return try await ItemOperations.create(req.data, paths: try MemberPaths(uid: auth.uid), docs: req.documents)
        }

        fn.onCall("updateItem") { (req: CallableRequest<UpdateItem>) -> ItemReply in
            let auth = try req.requireAuth()
            return try await ItemOperations.update(req.data, paths: try MemberPaths(uid: auth.uid), docs: req.documents)
        }

        registerLifecycle(&fn)
    }
}
