@testable import HearthAuth
import HearthModel
@_spi(Internals) import HearthRuntime
@testable import HearthStore
import HearthTesting
import Testing

/// Reads the raw refresh-token rows, to check what is stored.
protocol SQLiteEngineProbe {
    func rawRefreshTokens() throws -> [String]
}

extension SQLiteEngine: SQLiteEngineProbe {
    func rawRefreshTokens() throws -> [String] {
        try readers.withReader { db in try db.query("SELECT hex(hash) || uid FROM refresh_tokens") { $0.text(0) } }
    }
}

@Suite("User records")
struct UserTests {
    func app() async throws -> TestRuntime { try await TestRuntime(units: []) }

    @Test("create with a generated or given uid; get by uid, email (any case), phone and provider uid")
    func createAndGet() async throws {
        let app = try await app()
        defer { withExtendedLifetime(app) {} }
        let auth = app.runtime.auth
        let generated = try await auth.createUser(NewUser(email: "x@example.com"))
        #expect(generated.uid.count == 28)
        let given = try await auth.createUser(NewUser(uid: "u1", email: "Mixed@Example.com", phoneNumber: "+821012345678",
                                                      providerToLink: .init(providerId: "github.com", uid: "gh-9")))
        #expect(try await auth.getUser(uid: "u1") == given)
        #expect(try await auth.getUser(email: "mixed@example.COM").uid == "u1")
        #expect(try await auth.getUser(phoneNumber: "+821012345678").uid == "u1")
        #expect(try await auth.getUser(provider: "github.com", providerUID: "gh-9").uid == "u1")
        await #expect { try await auth.getUser(uid: "nobody") } throws: { ($0 as? HTTPSError)?.code == .notFound }
    }

    @Test("duplicate uid, email, phone or provider identity is already-exists", arguments: [
        NewUser(uid: "u1"), NewUser(email: "A@example.com"), NewUser(phoneNumber: "+15555550100"),
        NewUser(providerToLink: .init(providerId: "apple.com", uid: "ap-1")),
    ])
    func duplicates(second: NewUser) async throws {
        let app = try await app()
        let auth = app.runtime.auth
        _ = try await auth.createUser(NewUser(uid: "u1", email: "a@example.com", phoneNumber: "+15555550100",
                                              providerToLink: .init(providerId: "apple.com", uid: "ap-1")))
        let events = try UserTable(engine: app.runtime.store.engine as! SQLiteEngine).lastEventSequence()
        await #expect { try await auth.createUser(second) } throws: { ($0 as? HTTPSError)?.code == .alreadyExists }
        #expect(try UserTable(engine: app.runtime.store.engine as! SQLiteEngine).lastEventSequence() == events, "a refused create logs no event")
    }

    @Test("bad fields are invalid-argument", arguments: [
        NewUser(uid: ""), NewUser(uid: String(repeating: "x", count: 129)), NewUser(email: "not-an-email"),
        NewUser(phoneNumber: "555-0100"), NewUser(phoneNumber: "+0123"), NewUser(photoURL: "https://x/\u{7}"),
        NewUser(photoURL: "https://x/" + String(repeating: "p", count: 2048)),
    ])
    func badFields(user: NewUser) async throws {
        let app = try await app()
        defer { withExtendedLifetime(app) {} }
        let auth = app.runtime.auth
        await #expect { try await auth.createUser(user) } throws: { ($0 as? HTTPSError)?.code == .invalidArgument }
    }

    @Test("update changes fields, links and unlinks providers; the email stays unique")
    func update() async throws {
        let app = try await app()
        defer { withExtendedLifetime(app) {} }
        let auth = app.runtime.auth
        _ = try await auth.createUser(NewUser(uid: "a", email: "a@example.com"))
        _ = try await auth.createUser(NewUser(uid: "b", email: "b@example.com"))
        let updated = try await auth.updateUser(uid: "a", UserUpdate(emailVerified: true, displayName: "A", photoURL: "https://x/p.png",
                                                                      providerToLink: .init(providerId: "apple.com", uid: "s1")))
        #expect(updated.displayName == "A")
        #expect(updated.providerData.map(\.providerId) == ["apple.com"])
        #expect(try await auth.getUser(provider: "apple.com", providerUID: "s1").uid == "a")
        let unlinked = try await auth.updateUser(uid: "a", UserUpdate(providersToUnlink: ["apple.com"]))
        #expect(unlinked.providerData.isEmpty)
        await #expect { try await auth.getUser(provider: "apple.com", providerUID: "s1") } throws: { ($0 as? HTTPSError)?.code == .notFound }
        await #expect { try await auth.updateUser(uid: "a", UserUpdate(email: "B@example.com")) } throws: { ($0 as? HTTPSError)?.code == .alreadyExists }
        await #expect { try await auth.updateUser(uid: "zz", UserUpdate(displayName: "x")) } throws: { ($0 as? HTTPSError)?.code == .notFound }
    }

    @Test("custom claims: at most 1000 bytes, reserved names refused, cleared with nil")
    func claims() async throws {
        let app = try await app()
        defer { withExtendedLifetime(app) {} }
        let auth = app.runtime.auth
        _ = try await auth.createUser(NewUser(uid: "c"))
        try await auth.setCustomClaims(uid: "c", ["role": "admin"])
        #expect(try await auth.getUser(uid: "c").customClaims == ["role": "admin"])
        await #expect { try await auth.setCustomClaims(uid: "c", ["big": .string(String(repeating: "x", count: 1000))]) } throws: {
            ($0 as? HTTPSError)?.message.contains("1000") == true
        }
        for reserved in ["sub", "firebase", "aud", "exp", "iat", "iss", "user_id", "auth_time"] {
            await #expect { try await auth.setCustomClaims(uid: "c", [reserved: 1]) } throws: { ($0 as? HTTPSError)?.code == .invalidArgument }
        }
        try await auth.setCustomClaims(uid: "c", nil)
        #expect(try await auth.getUser(uid: "c").customClaims == [:], "cleared, as Firebase keeps them: {}")
    }

    @Test("list pages through users in uid order")
    func list() async throws {
        let app = try await app()
        defer { withExtendedLifetime(app) {} }
        let auth = app.runtime.auth
        for i in 0..<25 { _ = try await auth.createUser(NewUser(uid: String(format: "u%02d", i))) }
        var seen: [String] = []
        var token: String?
        repeat {
            let page = try await auth.listUsers(maxResults: 10, pageToken: token)
            seen += page.users.map(\.uid)
            token = page.nextPageToken
        } while token != nil
        #expect(seen == (0..<25).map { String(format: "u%02d", $0) })
        await #expect(throws: HTTPSError.self) { try await auth.listUsers(maxResults: 0) }
    }

    @Test("creating and deleting users log user events in the same transaction, with the record as it was")
    func events() async throws {
        let app = try await app()
        let auth = app.runtime.auth
        let table = UserTable(engine: app.runtime.store.engine as! SQLiteEngine)
        _ = try await auth.createUser(NewUser(uid: "e", email: "e@example.com"))
        _ = try await auth.updateUser(uid: "e", UserUpdate(displayName: "Before delete"))
        try await auth.deleteUser(uid: "e")
        let events = try table.events(after: 0, limit: 10)
        #expect(events.map(\.kind) == [.created, .deleted])
        #expect(events[1].user.displayName == "Before delete")
        #expect(events[1].user.email == "e@example.com")
        await #expect { try await auth.deleteUser(uid: "e") } throws: { ($0 as? HTTPSError)?.code == .notFound }
        #expect(try table.events(after: 0, limit: 10).count == 2)
    }

    @Test("concurrent creation of users with one email: exactly one wins")
    func concurrentEmail() async throws {
        let app = try await app()
        defer { withExtendedLifetime(app) {} }
        let auth = app.runtime.auth
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for i in 0..<20 {
                group.addTask { (try? await auth.createUser(NewUser(uid: "racer\(i)", email: "same@example.com"))) != nil }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 }.count == 1)
        #expect(try await auth.listUsers().users.count == 1)
    }
}

@Suite("Refresh tokens of deleted users")
struct DeletedUserRefreshTokenTests {
    @Test("deleting a user revokes its refresh tokens and drops the claims they carried; a new user under the uid gets none of them")
    func deletedUsersTokens() async throws {
        let app = try await TestRuntime(units: [])
        let auth = app.runtime.auth
        let signIn = try await auth.signInWithCustomToken(try auth.createCustomToken(uid: "ann", claims: ["role": "admin"]))
        let table = UserTable(engine: app.runtime.store.engine as! SQLiteEngine)
        let hash = Crypto.sha256(Array(signIn.refreshToken.utf8))
        #expect(try table.refreshTokenRecord(hash: hash)?.claims == ["role": "admin"])
        #expect(try table.refreshTokenRecord(hash: hash)?.revokedTime == nil)

        try await auth.deleteUser(uid: "ann")
        let kept = try #require(try table.refreshTokenRecord(hash: hash))
        #expect(kept.revokedTime != nil)
        #expect(kept.claims.isEmpty, "a deleted user's claims are not kept")
        await #expect(throws: AuthFailure.userNotFound, "the user is gone") { _ = try await auth.refresh(signIn.refreshToken) }

        _ = try await auth.createUser(NewUser(uid: "ann"))
        do {
            _ = try await auth.refresh(signIn.refreshToken)
            Issue.record("the old token signed in the new user")
        } catch let error as AuthFailure {
            #expect(error == .tokenExpired)
        }
    }

    @Test("emails are unique as Firebase compares them: ASCII case folded, everything else exact")
    func emailComparison() async throws {
        let runtime = try await TestRuntime(units: [])
        let auth = runtime.runtime.auth
        _ = try await auth.createUser(NewUser(uid: "ascii", email: "Kelvin@Example.com"))
        await #expect { try await auth.createUser(NewUser(email: "kelvin@EXAMPLE.com")) } throws: { ($0 as? HTTPSError)?.code == .alreadyExists }
        // KELVIN SIGN (U+212A) folds to k under Unicode case folding; it is another address.
        let kelvin = try await auth.createUser(NewUser(uid: "kelvin-sign", email: "\u{212A}elvin@example.com"))
        #expect(try await auth.getUser(email: "\u{212A}elvin@example.com").uid == kelvin.uid)
        #expect(try await auth.getUser(email: "kelvin@example.com").uid == "ascii")
        // Capital I with a dot lower-cases to i + U+0307 in Unicode; neither merges with the other.
        _ = try await auth.createUser(NewUser(uid: "dotted", email: "\u{130}nci@example.com"))
        _ = try await auth.createUser(NewUser(uid: "combining", email: "i\u{307}nci@example.com"))
        #expect(try await auth.getUser(email: "\u{130}nci@example.com").uid == "dotted")
        #expect(try await auth.getUser(email: "i\u{307}nci@EXAMPLE.com").uid == "combining")
        // Precomposed and decomposed é are different bytes: different addresses.
        _ = try await auth.createUser(NewUser(uid: "precomposed", email: "caf\u{E9}@example.com"))
        _ = try await auth.createUser(NewUser(uid: "decomposed", email: "cafe\u{301}@example.com"))
        #expect(try await auth.getUser(email: "cafe\u{301}@example.com").uid == "decomposed")
    }
}

