import Foundation
import HearthModel
@testable import HearthRules
import Testing

/// A fixed request time for every test: 2023-11-14T22:13:20Z.
let testTime = Timestamp(seconds: 1_700_000_000)

let alice = RulesAuth(uid: "alice", token: [
    "email": "alice@example.com", "email_verified": true,
    "firebase": ["sign_in_provider": "google.com"], "admin": false,
])
let bob = RulesAuth(uid: "bob")

/// A rules file with `body` inside `match /databases/{database}/documents`.
func rulesFile(_ body: String) -> String {
    """
    rules_version = '2';
    service cloud.firestore {
      match /databases/{database}/documents {
    \(body)
      }
    }
    """
}

func load(_ source: String, file: String = "test.rules") throws -> Ruleset {
    do { return try Ruleset(source: source, fileName: file) } catch {
        throw Failure("rules did not load: \(error)")
    }
}

/// The error loading `source` gives, or nil when it loads.
func loadError(_ source: String) -> RulesError? {
    do {
        _ = try Ruleset(source: source, fileName: "test.rules")
        return nil
    } catch {
        return error
    }
}

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

func path(_ text: String) throws -> DocumentPath {
    do { return try DocumentPath(text) } catch { throw Failure("bad path \(text): \(error.message)") }
}

func collection(_ text: String) throws -> CollectionPath {
    do { return try CollectionPath(text) } catch { throw Failure("bad collection \(text): \(error.message)") }
}

func field(_ text: String) throws -> FieldPath {
    do { return try FieldPath(text) } catch { throw Failure("bad field \(text): \(error.message)") }
}

/// The sample app's rules file at the package root.
func sampleRules() throws -> Ruleset {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("firestore.rules")
    let text = try String(contentsOf: url, encoding: .utf8)
    return try load(text, file: "firestore.rules")
}

/// A document store for `get()`/`exists()` that counts the reads reaching it.
final class FakeStore {
    var documents: [String: [String: Value]]
    private(set) var reads: [String] = []

    init(_ documents: [String: [String: Value]] = [:]) { self.documents = documents }

    func access(limit: Int = DocumentAccess.singleDocumentLimit) -> DocumentAccess {
        DocumentAccess(limit: limit, read: { [self] p in
            reads.append(p.description)
            return documents[p.description]
        })
    }
}
