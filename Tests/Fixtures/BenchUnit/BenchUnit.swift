import HearthFunctions

/// The write + trigger workload of the benchmarks (`Scripts/bench/writetrigger`, and the peers'
/// comparison): a callable adds a document, and a trigger on its creation writes a log document.
public enum BenchUnit: FunctionModule {
    public static let name = "BenchUnit"

    struct Item: Codable, Sendable {
        var title: String
        var n: Int
    }

    public static func register(_ fn: inout FunctionRegistry) {
        fn.onCall("benchCreate") { (req: CallableRequest<Item>) -> String in
            let ref = try req.documents.collection("bench").document()
            try await ref.create(req.data)
            return ref.id
        }

        fn.onDocumentCreated("benchLog", .init(document: "bench/{id}", concurrency: 64)) { (event: DocumentEvent<Item>) in
            let id = event.params["id"] ?? "?"
            try await event.documents.collection("benchLog").document(id).set(["item": Value.string(id), "n": .int(Int64(event.after?.data.n ?? 0))])
        }
    }
}
