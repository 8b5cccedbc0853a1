import HearthModel
import HearthTesting

/// The app's units, as `Scripts/run` serves them.
let appUnits = ["Members", "Items", "CategoryCleanup", "AccountCleanup", "Reminders"]

extension TestRuntime {
    /// First sign-in setup for `uid` (SCENARIOS §2).
    func member(_ uid: String, timeZone: String = "Asia/Seoul") async throws {
        try await call("initializeMember", ["timeZone": .string(timeZone)], as: uid)
    }

    /// Seeds many documents, 500 to a commit (Firestore's limit on one commit).
    func seedMany(_ documents: [(String, Value)]) async throws {
        var start = 0
        while start < documents.count {
            let end = min(start + 500, documents.count)
            try await seed(Dictionary(uniqueKeysWithValues: documents[start..<end].map { ($0.0, $0.1) }))
            start = end
        }
    }

    /// How many documents there are under `path` (a document), at every depth.
    func countUnder(_ path: String) async throws -> Int {
        try await documents.paths(under: path.split(separator: "/").map(String.init)).count
    }
}
