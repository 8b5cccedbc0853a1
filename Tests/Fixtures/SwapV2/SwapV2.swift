import Foundation
import HearthFunctions

/// Version 2 of the unit "Swap" (the deploy tests activate one version, then the other).
public enum SwapV2: FunctionModule {
    public static let name = "Swap"

    public static func register(_ fn: inout FunctionRegistry) {
        fn.onCall("swapVersion") { (_: CallableRequest<Value>) in "v2" }

        /// Sleeps on the host clock, then says which version answered.
        fn.onCall("swapSlow", .init(timeout: .seconds(120))) { (req: CallableRequest<Double>) -> String in
            try await req.context.clock.sleep(for: .seconds(double: req.data))
            return "v2"
        }

        fn.onDocumentCreated("swapLog", "swap/{id}") { (event: DocumentEvent<Value>) in
            try await event.documents.collection("swapLog").document(event.params["id"] ?? "x").set(["version": "v2"] as [String: Value])
        }

        /// Added in v2: starts at the end of the change feed.
        fn.onDocumentCreated("swapAudit", "swap/{id}") { (event: DocumentEvent<Value>) in
            try await event.documents.collection("swapAudit").document(event.params["id"] ?? "x").set(["version": "v2"] as [String: Value])
        }
    }
}
