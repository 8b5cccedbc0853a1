import Foundation
import HearthFunctions

/// Version 1 of the unit "Swap" (the deploy tests activate one version, then the other).
public enum SwapV1: FunctionModule {
    public static let name = "Swap"

    public static func register(_ fn: inout FunctionRegistry) {
        fn.onCall("swapVersion") { (_: CallableRequest<Value>) in "v1" }

        /// Sleeps on the host clock, then says which version answered.
        fn.onCall("swapSlow", .init(timeout: .seconds(120))) { (req: CallableRequest<Double>) -> String in
            try await req.context.clock.sleep(for: .seconds(double: req.data))
            return "v1"
        }

        fn.onDocumentCreated("swapLog", "swap/{id}") { (event: DocumentEvent<Value>) in
            try await event.documents.collection("swapLog").document(event.params["id"] ?? "x").set(["version": "v1"] as [String: Value])
        }

        /// Removed in v2: its schedule stops, and its queue keeps its tasks.
        fn.onSchedule("swapTick", "every 5 minutes") { (_: ScheduledEvent) in }
        fn.onTaskDispatched("swapQueue") { (_: TaskRequest<Value>) in }
    }
}
