import Foundation
import HearthAuth
import HearthModel
@_spi(Internals) @testable import HearthRuntime
import HearthTesting
import Testing

/// The Auth emulator's `accounts.json` as `firebase emulators:export` writes it (the body of its
/// `accounts:batchGet?maxResults=-1`, a DownloadAccountResponse): a password user, a Google user
/// with claims, a phone user, a disabled user whose password has colons, an anonymous user.
let emulatorAccounts = #"""
{"kind":"identitytoolkit#DownloadAccountResponse","users":[
{"localId":"yE2sJxMG6JDacAccEOoDyIgYPyzG","createdAt":"1638245305598","lastLoginAt":"1638245305598","emailVerified":false,"email":"test2@example.com","salt":"fakeSaltSkqiFRkJNbxPv9XW7IyQ","passwordHash":"fakeHash:salt=fakeSaltSkqiFRkJNbxPv9XW7IyQ:password=012345","passwordUpdatedAt":1638245305598,"validSince":"1638245305","providerUserInfo":[{"providerId":"password","email":"test2@example.com","federatedId":"test2@example.com","rawId":"test2@example.com"}],"lastRefreshAt":"2021-11-30T04:08:25.598Z"},
{"localId":"gina","createdAt":"1638245400000","lastLoginAt":"1638245500000","displayName":"Gina","photoUrl":"https://example.com/gina.png","emailVerified":true,"email":"gina@example.com","providerUserInfo":[{"providerId":"google.com","rawId":"1234567890","federatedId":"1234567890","displayName":"Gina","photoUrl":"https://example.com/gina.png","email":"gina@example.com"}],"validSince":"1638245400","customAttributes":"{\"role\":\"admin\",\"tier\":2}"},
{"localId":"phil","createdAt":"1638245600000","lastLoginAt":"1638245600000","phoneNumber":"+15555550100","providerUserInfo":[{"providerId":"phone","phoneNumber":"+15555550100","rawId":"+15555550100"}],"validSince":"1638245600"},
{"localId":"dora","createdAt":"1638245700000","lastLoginAt":"1638245700000","email":"dora@example.com","emailVerified":true,"disabled":true,"salt":"fakeSaltDora","passwordHash":"fakeHash:salt=fakeSaltDora:password=pa:ss=word:x","passwordUpdatedAt":1638245700000,"validSince":"1638245700","providerUserInfo":[{"providerId":"password","email":"dora@example.com","federatedId":"dora@example.com","rawId":"dora@example.com"}]},
{"localId":"anon","createdAt":"1638245800000","lastLoginAt":"1638245800000","validSince":"1638245800"}
]}
"""#

/// One user of a production `firebase auth:export` (the firebase/scrypt README's example hash).
let productionAccount = #"""
{"users":[{"localId":"imported-1","email":"one@example.com","emailVerified":true,"passwordHash":"lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==","salt":"42xEC+ixf3L2lw==","createdAt":"1700000000000"}]}
"""#

func writeAccounts(_ text: String, under directory: String = temporaryDirectory("emulator"), file: String = "auth_export/accounts.json") throws -> String {
    let path = directory + "/" + file
    try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)))
    return directory
}

func authApp() async throws -> TestRuntime {
    try await TestRuntime(units: ["DeliveryUnit"], start: Timestamp(seconds: 1_800_000_000)) { config in config.auth.passwordHashMemCost = 10 }
}

// One test at a time: each hashes passwords with scrypt.
@Suite("Importing the Firebase Auth emulator's users", .serialized)
struct FirebaseAuthImportTests {
    @Test("the emulator's users arrive with their fields, links and claims, sign in with the same passwords (hashed by Hearth), and fire no onUserCreated")
    func emulatorExport() async throws {
        let directory = try writeAccounts(emulatorAccounts)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let app = try await authApp()
        let summary = try await app.runtime.importFirebaseAuth(from: directory)
        #expect(summary.counts == [.documents: 0, .users: 5, .deliveries: 0, .schedules: 0, .taskIDs: 0])
        #expect(summary.source.hasSuffix("auth_export/accounts.json"))

        let signIn = try await app.runtime.auth.signInWithPassword(email: "test2@example.com", password: "012345")
        #expect(signIn.uid == "yE2sJxMG6JDacAccEOoDyIgYPyzG")
        await #expect(throws: AuthFailure.self) { try await app.runtime.auth.signInWithPassword(email: "test2@example.com", password: "012346") }
        let disabled = await #expect(throws: AuthFailure.self) { try await app.runtime.auth.signInWithPassword(email: "dora@example.com", password: "pa:ss=word:x") }
        #expect(disabled?.code == "USER_DISABLED", "the right password, a disabled user")

        let test2 = try await app.runtime.users.get(.uid("yE2sJxMG6JDacAccEOoDyIgYPyzG"))
        let hash = try #require(test2.passwordHash)
        #expect(hash.algorithm == .standardScrypt && !hash.hash.contains("012345") && !hash.salt.contains("fakeSalt"), "Hearth's own hash, not the emulator's")
        #expect(test2.providerData.map(\.providerId) == ["password"])
        #expect(test2.metadata.creationTime == Timestamp(seconds: 1_638_245_305, nanos: 598_000_000))
        let gina = try await app.runtime.users.get(.provider("google.com", uid: "1234567890"))
        #expect(gina.uid == "gina" && gina.emailVerified && gina.displayName == "Gina" && gina.photoURL == "https://example.com/gina.png")
        #expect(gina.customClaims == ["role": "admin", "tier": 2])
        #expect(gina.passwordHash == nil)
        #expect(gina.metadata.lastSignInTime == Timestamp(seconds: 1_638_245_500))
        #expect(try await app.runtime.users.get(.phoneNumber("+15555550100")).uid == "phil")
        let dora = try await app.runtime.users.get(.email("dora@example.com"))
        #expect(dora.disabled)
        #expect(try await app.runtime.users.get(.uid("anon")).providerData.isEmpty)
        #expect(try app.deliveries(function: "welcome").isEmpty, "no onUserCreated: these users existed before")
    }

    @Test("a production scrypt hash is refused without the project's hash parameters, and kept (then verified at sign-in) with them")
    func productionHash() async throws {
        let directory = try writeAccounts(productionAccount, file: "accounts.json")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let app = try await authApp()
        let refused = await #expect(throws: ImportError.self) { try await app.runtime.importFirebaseAuth(from: directory + "/accounts.json") }
        #expect(refused?.description.hasPrefix(#"accounts.json: users[0] (localId "imported-1"): field 'passwordHash': a hash made by Firebase's scrypt"#) == true,
                "\(String(describing: refused))")
        #expect(refused?.description.contains("--hash-key") == true)
        let parameters = FirebaseScryptParameters(
            signerKey: try #require(Base64.decode("jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==")),
            saltSeparator: try #require(Base64.decode("Bw==")), rounds: 8, memoryCost: 14)
        _ = try await app.runtime.importFirebaseAuth(from: directory, scrypt: parameters)
        #expect(try await app.runtime.users.get(.uid("imported-1")).passwordHash?.algorithm == .firebaseScrypt)
        #expect(try await app.runtime.auth.signInWithPassword(email: "one@example.com", password: "user1password").uid == "imported-1")
        #expect(try await app.runtime.users.get(.uid("imported-1")).passwordHash?.algorithm == .standardScrypt, "replaced at the first sign-in")
        var bad = parameters
        bad.rounds = 99
        let badRounds = await #expect(throws: ImportError.self) { try await app.runtime.importFirebaseAuth(from: directory, scrypt: bad) }
        #expect(badRounds?.description.contains("rounds must be 1 to 8") == true, "\(String(describing: badRounds))")
    }

    @Test("a user whose uid or email is taken refuses the import, naming both; nothing is written")
    func conflicts() async throws {
        let directory = try writeAccounts(emulatorAccounts)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let app = try await authApp()
        try await app.createUser(NewUser(uid: "existing", email: "Gina@Example.com"))
        let byEmail = await #expect(throws: ImportError.self) { try await app.runtime.importFirebaseAuth(from: directory) }
        #expect(byEmail?.description == #"accounts.json: users[1] (localId "gina"): field 'email': gina@example.com is already the address of user 'existing'"#,
                "\(String(describing: byEmail))")
        #expect(try await app.runtime.users.list().users.map(\.uid) == ["existing"], "not even the users before it")
        try await app.runtime.users.delete(uid: "existing")
        try await app.createUser(NewUser(uid: "phil"))
        let byUID = await #expect(throws: ImportError.self) { try await app.runtime.importFirebaseAuth(from: directory) }
        #expect(byUID?.description.hasPrefix(#"accounts.json: users[2] (localId "phil"): field 'uid': the uid 'phil' is taken"#) == true, "\(String(describing: byUID))")
        #expect(try await app.runtime.users.list().users.map(\.uid) == ["phil"])
    }

    @Test("fields Hearth cannot keep, bad types and bad JSON are refused with the user or line and the field", arguments: [
        (#"{"users":[{"localId":"a"},{"localId":"t","tenantId":"tenant-1"}]}"#, #"accounts.json: users[1] (localId "t"): field 'tenantId'"#),
        (#"{"users":[{"localId":"m","email":"m@example.com","mfaInfo":[{"phoneInfo":"+15555550101","mfaEnrollmentId":"e1"}]}]}"#, #"users[0] (localId "m"): field 'mfaInfo'"#),
        (#"{"users":[{"localId":"e","email":5}]}"#, #"users[0] (localId "e"): Invalid value at 'email' (TYPE_STRING), 5"#),
        (#"{"users":[{"localId":"w","email":"w@example.com","salt":"s","passwordHash":"fakeHash:salt=s:password=abc"}]}"#, #"users[0] (localId "w"): WEAK_PASSWORD"#),
        (#"{"users":[{"localId":"s","email":"s@example.com","salt":"s1","passwordHash":"fakeHash:salt=s2:password=secret-1"}]}"#, "the fake hash's salt is not the user's salt field"),
        (#"{"users":[{"localId":"b","email":"not an address"}]}"#, #"users[0] (localId "b"): INVALID_EMAIL"#),
        (#"{"users":[{"email":"x@example.com"}]}"#, "users[0]: MISSING_LOCAL_ID"),
        ("{\"users\": [\n  {\"localId\": \"a\"},\n  {\"localId\": \"b\",}\n]}", "accounts.json:3: not valid JSON at column"),
        (#"{"users": {"localId": "a"}}"#, "accounts.json: field 'users': expected a list, found map"),
        (#"[1]"#, "accounts.json: not a JSON object"),
    ])
    func refusals(text: String, expected: String) async throws {
        let directory = try writeAccounts(text)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let app = try await authApp()
        let error = await #expect(throws: ImportError.self) { try await app.runtime.importFirebaseAuth(from: directory) }
        #expect(error?.description.contains(expected) == true, "\(String(describing: error))")
        #expect(try await app.runtime.users.list().users.isEmpty)
    }

    @Test("PATH may be the export directory, its auth_export or accounts.json; tenants' files and missing files are refused")
    func locating() async throws {
        let directory = try writeAccounts(emulatorAccounts)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for path in [directory, directory + "/auth_export", directory + "/auth_export/accounts.json"] {
            #expect(try FirebaseAuthExport.locate(path) == directory + "/auth_export/accounts.json")
        }
        #expect(throws: ImportError.self) { try FirebaseAuthExport.locate(directory + "/missing") }
        #expect(FileManager.default.createFile(atPath: directory + "/auth_export/accounts-tenant1.json", contents: Data("{}".utf8)))
        let tenants = #expect(throws: ImportError.self) { try FirebaseAuthExport.locate(directory) }
        #expect(tenants?.message.contains("accounts-tenant1.json") == true)
        let empty = temporaryDirectory("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: empty) }
        let none = #expect(throws: ImportError.self) { try FirebaseAuthExport.locate(empty) }
        #expect(none?.message.contains("holds no accounts.json") == true)
    }
}
