import Foundation
import HearthAuth
import HearthModel
import HearthStore
import Synchronization

/// A Firebase project's password hash parameters (the console's Authentication › Users ›
/// "Password hash parameters", what `firebase auth:import --hash-algo=SCRYPT` takes): with them,
/// hashes exported from production Firebase are kept and checked at sign-in.
public struct FirebaseScryptParameters: Sendable, Equatable {
    public var signerKey: [UInt8]
    public var saltSeparator: [UInt8]
    public var rounds: Int
    public var memoryCost: Int

    public init(signerKey: [UInt8], saltSeparator: [UInt8], rounds: Int, memoryCost: Int) {
        self.signerKey = signerKey
        self.saltSeparator = saltSeparator
        self.rounds = rounds
        self.memoryCost = memoryCost
    }
}

extension Runtime {
    /// Creates the users of a Firebase Auth emulator export (`firebase emulators:export DIR`
    /// writes `DIR/auth_export/accounts.json`, Identity Toolkit's DownloadAccountResponse). `path`
    /// is that file, its `auth_export` directory or the export directory.
    ///
    /// - Passwords: the emulator keeps them in the clear inside a fake hash
    ///   (`fakeHash:salt=…:password=…`); each is hashed with this runtime's own scrypt, so the user
    ///   signs in with the same password. A real hash (`firebase auth:export` from a production
    ///   project: Firebase's modified scrypt) is kept only with `scrypt`, the project's
    ///   parameters, which verify it at sign-in (and it is replaced by a new hash then); without
    ///   them such a user is refused, since it could never sign in with its password.
    /// - Kept: uid, email and its verification, display name, photo URL, phone number, disabled,
    ///   linked providers (`providerUserInfo`), custom claims (`customAttributes`), creation and
    ///   last sign-in times. Refused: `tenantId` (Hearth has no tenants: the emulator's
    ///   `accounts-<tenant>.json` files are not read) and `mfaInfo` (no second factors).
    ///
    /// Every user is checked before anything is written, and all are written in one transaction
    /// or none: a user whose uid, email, phone number or provider account is already taken (by a
    /// stored user or an earlier one in the file) refuses the import, naming both. The store may
    /// hold other users and documents. No `onUserCreated` trigger runs: these users existed before.
    public func importFirebaseAuth(from path: String, scrypt: FirebaseScryptParameters? = nil,
                                   progress: @escaping @Sendable (DataTransferProgress) -> Void = { _ in }) async throws -> ImportSummary {
        let file = try FirebaseAuthExport.locate(path)
        let name = (file as NSString).lastPathComponent
        let hash: ImportHash = scrypt.map { .firebaseScrypt(signerKey: $0.signerKey, saltSeparator: $0.saltSeparator, rounds: $0.rounds, memoryCost: $0.memoryCost) } ?? .none
        do { try AuthService.checkImportHash(hash) } catch { throw ImportError("the scrypt parameters: \(error)") }
        let accounts = try FirebaseAuthExport.read(file, name: name, scrypt: scrypt != nil)

        // Hashing is the slow part (one scrypt a password, spread over the cores): all of it
        // before the transaction, so the store is locked only for the inserts.
        let auth = self.auth
        let results = await withTaskGroup(of: (Int, Result<UserRecord, Error>).self) { group in
            for (index, account) in accounts.enumerated() {
                group.addTask {
                    do { return (index, .success(try await auth.importedRecord(account.user, hash: hash))) } catch { return (index, .failure(error)) }
                }
            }
            var out = [Result<UserRecord, Error>?](repeating: nil, count: accounts.count)
            var done = 0
            for await (index, result) in group {
                out[index] = result
                done += 1
                if done % 1000 == 0 { progress(DataTransferProgress(kind: .users, count: done, finished: false)) }
            }
            return out
        }
        var records: [UserRecord] = []
        records.reserveCapacity(accounts.count)
        for (index, result) in results.enumerated() {
            switch result {
            case .success(let record)?: records.append(record)
            case .failure(let error)?: throw ImportError(file: name, record: accounts[index].label, FirebaseAuthExport.describe(error))
            case nil: throw ImportError(file: name, record: accounts[index].label, "was not prepared")
            }
        }

        let position = Mutex(0)
        let queue = records
        do {
            _ = try await store.engine.importRecords(requireEmpty: false) {
                position.withLock { (i: inout Int) -> ExportRecord? in
                    guard i < queue.count else { return nil }
                    defer { i += 1 }
                    return .user(queue[i])
                }
            }
        } catch {
            let index = position.withLock { $0 } - 1
            guard accounts.indices.contains(index) else { throw error }
            throw ImportError(file: name, record: accounts[index].label, (error as? ImportError)?.message ?? FirebaseAuthExport.describe(error))
        }
        progress(DataTransferProgress(kind: .users, count: records.count, finished: true))
        return ImportSummary(source: file, counts: ExportFormat.Kind.noneOfEach.merging([.users: records.count]) { _, n in n }, madePending: 0)
    }
}

/// Reading the Auth emulator's `accounts.json`.
enum FirebaseAuthExport {
    /// One account of the file, ready for `AuthService.importedRecord`.
    struct Account {
        var user: ImportedUser
        /// How errors name it: `users[3] (localId "u3")`.
        var label: String
    }

    /// The accounts file at `path`: the file itself, or `accounts.json` in the directory (or in its
    /// `auth_export`). A directory that also holds tenants' files is refused (Hearth has none).
    static func locate(_ path: String) throws(ImportError) -> String {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { throw ImportError("\(path) does not exist") }
        guard isDirectory.boolValue else { return path }
        for directory in [path + "/auth_export", path] {
            let file = directory + "/accounts.json"
            guard FileManager.default.fileExists(atPath: file) else { continue }
            let tenants = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
                .filter { $0.hasPrefix("accounts-") && $0.hasSuffix(".json") }.sorted()
            if !tenants.isEmpty {
                throw ImportError("\(directory) also holds tenants' accounts (\(tenants.joined(separator: ", "))); Hearth has no tenants: "
                                  + "name \(file) to import the default tenant's users only")
            }
            return file
        }
        throw ImportError("\(path) holds no accounts.json nor auth_export/accounts.json (what `firebase emulators:export` writes)")
    }

    /// The file's accounts, each checked (types, the emulator's fake hashes, fields Hearth has no
    /// place for) before any is hashed or written.
    static func read(_ file: String, name: String, scrypt: Bool) throws(ImportError) -> [Account] {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ImportError(file: name, "cannot read \(file): \(String(cString: strerror(errno)))")
        }
        let bytes = [UInt8](data)
        let document: Value
        do { document = try JSONParser.parse(bytes) } catch {
            let (line, column) = position(of: error.offset, in: bytes)
            throw ImportError(file: name, line: line, "not valid JSON at column \(column): \(error.message)")
        }
        guard case .map(let top) = document else { throw ImportError(file: name, "not a JSON object (the emulator writes {\"kind\": …, \"users\": […]})") }
        let items: [Value]
        switch top["users"] {
        case nil, .null?: items = []
        case .array(let list)?: items = list
        case let other?: throw ImportError(file: name, "field 'users': expected a list, found \(other.typeName)")
        }
        var accounts: [Account] = []
        accounts.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            guard case .map(var m) = item else { throw ImportError(file: name, record: "users[\(index)]", "not an object") }
            let label = "users[\(index)]" + (m["localId"]?.stringValue.map { " (localId \"\(Printable.quoted($0, limit: 128))\")" } ?? "")
            func refuse(_ message: String) -> ImportError { ImportError(file: name, record: label, message) }
            if let tenant = m["tenantId"], tenant != .string(""), !tenant.isNull {
                throw refuse("field 'tenantId': the user belongs to a tenant, and Hearth has no tenants")
            }
            if case .array(let factors)? = m["mfaInfo"], !factors.isEmpty {
                throw refuse("field 'mfaInfo': the user has second factors enrolled, which Hearth does not support")
            }
            if case .string(let hash)? = m["passwordHash"], !hash.isEmpty {
                if hash.hasPrefix(fakeHashPrefix) {
                    do { m["rawPassword"] = .string(try password(inFakeHash: hash, salt: m["salt"]?.stringValue)) } catch { throw refuse(error.message) }
                    m["passwordHash"] = nil
                    m["salt"] = nil
                } else if !scrypt {
                    throw refuse("""
                        field 'passwordHash': a hash made by Firebase's scrypt (an export from a production project), which Hearth can check \
                        only with the project's hash parameters: pass --hash-key, --salt-separator, --rounds and --mem-cost (the console's \
                        Authentication › Users › Password hash parameters)
                        """)
                }
            }
            do { accounts.append(Account(user: try FrontDoor.importedUser(m), label: label)) } catch { throw refuse(describe(error)) }
        }
        return accounts
    }

    static let fakeHashPrefix = "fakeHash:salt="

    /// The password inside the emulator's fake hash, `fakeHash:salt=<salt>:password=<password>`
    /// (firebase-tools, src/emulator/auth/operations.ts, `hashPassword`): the salt is the user's
    /// `salt` field when it has one, and the password everything after it.
    static func password(inFakeHash hash: String, salt: String?) throws(FakeHashError) -> String {
        let rest = hash.utf8.dropFirst(fakeHashPrefix.utf8.count)
        let marker = ":password="
        if let salt {
            let head = Array((salt + marker).utf8)
            guard rest.starts(with: head) else { throw FakeHashError("field 'passwordHash': the fake hash's salt is not the user's salt field") }
            return String(decoding: rest.dropFirst(head.count), as: UTF8.self)
        }
        let text = String(decoding: rest, as: UTF8.self)
        guard let range = text.range(of: marker) else { throw FakeHashError("field 'passwordHash': a fake hash without ':password='") }
        return String(text[range.upperBound...])
    }

    struct FakeHashError: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    /// A refusal of `FrontDoor.importedUser` or `AuthService.importedRecord` in words.
    static func describe(_ error: Error) -> String {
        switch error {
        case let e as AuthFailure: return e.message
        case let e as ToolkitBody.FieldError: return e.message
        case let e as HTTPSError: return e.message
        case let e as CryptoError: return "field 'passwordHash': \(e)"
        default: return "\(error)"
        }
    }

    /// The 1-based line and column of byte `offset`.
    static func position(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        var line = 1, lineStart = 0
        for i in 0..<min(offset, bytes.count) where bytes[i] == UInt8(ascii: "\n") {
            line += 1
            lineStart = i + 1
        }
        return (line, offset - lineStart + 1)
    }
}
