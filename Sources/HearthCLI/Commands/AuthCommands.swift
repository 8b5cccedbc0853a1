import Foundation
import HearthModel
import HearthRuntime

/// Opening just what auth needs: the store (for users) and the key ring, without loading units.
enum AuthSetup {
    static func open(_ options: CommonOptions, io: CommandIO) async -> Runtime? {
        guard var config = RuntimeSetup.loadConfig(options, io: io) else { return nil }
        if options.logLevel == nil { config.log.level = .error }
        config.units = []
        do { return try await Runtime.open(config: config) } catch {
            io.err("error: cannot open the runtime's data in \(config.resolvedDataDirectory): \(error)")
            return nil
        }
    }

    static func printUser(_ user: UserRecord, _ io: CommandIO) throws {
        io.out(JSONWriter.string(try ValueEncoder().encode(user.redacted), options: JSONWriteOptions(style: .tagged, sortKeys: true, pretty: true)))
    }
}

/// `hearth users list|get|create|update|delete|claims`
struct UsersCommand: Command {
    static let path = ["users"]
    static let summary = "Manage auth users: list, get, create, update, delete, claims"
    static let help = """
        usage: hearth users list [--max N] [--page-token T]
               hearth users get (UID | --email E | --phone P | --provider ID --provider-uid U)
               hearth users create [--uid U] [--email E] [--phone P] [--name N] [--photo-url URL] [--email-verified] [--disabled]
               hearth users update UID [--email E] [--phone P] [--name N] [--photo-url URL] [--email-verified BOOL] [--disabled BOOL]
               hearth users delete UID
               hearth users claims UID (JSON | --clear)

        Users live in the runtime's database (data_dir); records print as JSON. Deleting a user runs
        the onUserDeleted functions when the runtime next delivers events.
          --config PATH        runtime configuration (default: runtime.toml)
        """

    enum Action: Equatable, Sendable {
        case list(max: Int, pageToken: String?)
        case get(uid: String?, email: String?, phone: String?, provider: String?, providerUID: String?)
        case create(NewUser)
        case update(uid: String, UserUpdate)
        case delete(uid: String)
        case claims(uid: String, claims: [String: Value]?)
    }

    var common: CommonOptions
    var action: Action

    static func parse(_ arguments: [String]) throws(UsageError) -> UsersCommand {
        guard let verb = arguments.first else { throw UsageError("missing a subcommand: list, get, create, update, delete or claims") }
        let rest = Array(arguments.dropFirst())
        let valued = CommonOptions.valued.union(["max", "page-token", "email", "phone", "provider", "provider-uid", "uid", "name", "photo-url", "email-verified", "disabled"])
        let boolean: Set<String> = verb == "create" ? ["email-verified", "disabled"] : (verb == "claims" ? ["clear"] : [])
        let args = try Arguments(rest, valued: verb == "create" ? valued.subtracting(["email-verified", "disabled"]) : valued, boolean: boolean)
        func bool(_ name: String) throws(UsageError) -> Bool? {
            guard let v = args.value(name) else { return nil }
            guard let b = Bool(v) else { throw UsageError("--\(name) needs true or false (got '\(v)')") }
            return b
        }
        let action: Action
        switch verb {
        case "list":
            _ = try args.requirePositionals([])
            action = .list(max: try args.int("max") ?? 1000, pageToken: args.value("page-token"))
        case "get":
            let p = try args.requirePositionals(["a uid"], optional: 1)
            let lookup = Action.get(uid: p.first, email: args.value("email"), phone: args.value("phone"), provider: args.value("provider"), providerUID: args.value("provider-uid"))
            let given = [p.first, args.value("email"), args.value("phone"), args.value("provider")].compactMap { $0 }.count
            guard given == 1 else { throw UsageError("give exactly one of UID, --email, --phone or --provider") }
            if args.value("provider") != nil && args.value("provider-uid") == nil { throw UsageError("--provider needs --provider-uid") }
            action = lookup
        case "create":
            _ = try args.requirePositionals([])
            action = .create(NewUser(uid: args.value("uid"), email: args.value("email"), emailVerified: args.flag("email-verified") ? true : nil,
                                     displayName: args.value("name"), photoURL: args.value("photo-url"), phoneNumber: args.value("phone"),
                                     disabled: args.flag("disabled") ? true : nil))
        case "update":
            let p = try args.requirePositionals(["a uid"])
            action = .update(uid: p[0], UserUpdate(email: args.value("email"), emailVerified: try bool("email-verified"), displayName: args.value("name"),
                                                   photoURL: args.value("photo-url"), phoneNumber: args.value("phone"), disabled: try bool("disabled")))
        case "delete":
            action = .delete(uid: try args.requirePositionals(["a uid"])[0])
        case "claims":
            let p = try args.requirePositionals(["a uid", "the claims as JSON"], optional: 1)
            if args.flag("clear") {
                guard p.count == 1 else { throw UsageError("use either claims JSON or --clear") }
                action = .claims(uid: p[0], claims: nil)
            } else {
                guard p.count == 2 else { throw UsageError("missing the claims as JSON (or --clear)") }
                let value: Value
                do { value = try JSONParser.parse(p[1]) } catch { throw UsageError("the claims are not valid JSON: \(error)") }
                guard case .map(let claims) = value else { throw UsageError("the claims must be a JSON object") }
                action = .claims(uid: p[0], claims: claims)
            }
        default:
            throw UsageError("unknown subcommand 'users \(verb)'; use list, get, create, update, delete or claims")
        }
        return UsersCommand(common: try CommonOptions(args), action: action)
    }

    func run(_ io: CommandIO) async -> Int32 {
        guard let runtime = await AuthSetup.open(common, io: io) else { return ExitCode.failure }
        let users = runtime.users
        do {
            switch action {
            case .list(let max, let token):
                let page = try await users.list(maxResults: max, pageToken: token)
                var out: [String: Value] = ["users": try ValueEncoder().encode(page.users.map(\.redacted))]
                if let next = page.nextPageToken { out["nextPageToken"] = .string(next) }
                io.out(JSONWriter.string(.map(out), options: JSONWriteOptions(style: .tagged, sortKeys: true, pretty: true)))
            case .get(let uid, let email, let phone, let provider, let providerUID):
                let lookup: UserLookup
                if let uid { lookup = .uid(uid) }
                else if let email { lookup = .email(email) }
                else if let phone { lookup = .phoneNumber(phone) }
                else { lookup = .provider(provider!, uid: providerUID!) }
                try AuthSetup.printUser(try await users.get(lookup), io)
            case .create(let request):
                try AuthSetup.printUser(try await users.create(request), io)
            case .update(let uid, let update):
                try AuthSetup.printUser(try await users.update(uid: uid, update), io)
            case .delete(let uid):
                try await users.delete(uid: uid)
                io.out(JSONWriter.string(["deleted": .string(uid)]))
            case .claims(let uid, let claims):
                try await users.setCustomClaims(uid: uid, claims)
                try AuthSetup.printUser(try await users.get(.uid(uid)), io)
            }
            return ExitCode.success
        } catch {
            return DocsJSON.fail(error, io)
        }
    }
}

/// `hearth token --uid UID [--claims JSON]`
struct TokenCommand: Command {
    static let path = ["token"]
    static let summary = "Print an ID token for a user, for local testing"
    static let help = """
        usage: hearth token --uid UID [--claims JSON] [--config PATH]

        Prints a signed ID token for UID (valid one hour), so curl and other tools can call functions
        as that user: curl -H "Authorization: Bearer $(hearth token --uid alice)" …
        The user is created if it does not exist (as a custom-token sign-in does); an existing user's
        profile and custom claims are included; --claims adds more.
        """

    var common: CommonOptions
    var uid: String
    var claims: [String: Value]

    static func parse(_ arguments: [String]) throws(UsageError) -> TokenCommand {
        let args = try Arguments(arguments, valued: CommonOptions.valued.union(["uid", "claims"]))
        _ = try args.requirePositionals([])
        guard let uid = args.value("uid"), !uid.isEmpty, uid.count <= 128 else { throw UsageError("--uid needs a uid of 1 to 128 characters") }
        var claims: [String: Value] = [:]
        if let text = args.value("claims") {
            let value: Value
            do { value = try JSONParser.parse(text) } catch { throw UsageError("--claims is not valid JSON: \(error)") }
            guard case .map(let m) = value else { throw UsageError("--claims must be a JSON object") }
            do { try UserRules.checkClaims(m) } catch { throw UsageError(error.message) }
            claims = m
        }
        return TokenCommand(common: try CommonOptions(args), uid: uid, claims: claims)
    }

    func run(_ io: CommandIO) async -> Int32 {
        guard let runtime = await AuthSetup.open(common, io: io) else { return ExitCode.failure }
        do {
            io.out(try await runtime.caller(asUser: uid, claims: claims).rawToken)
            return ExitCode.success
        } catch { return DocsJSON.fail(error, io) }
    }
}

/// `hearth auth jwks|rotate-key|verify`
struct AuthCommand: Command {
    static let path = ["auth"]
    static let summary = "The signing keys: print the JWKS, rotate the key, verify a token"
    static let help = """
        usage: hearth auth jwks             print the public signing keys as a JWKS document
               hearth auth rotate-key       make a new signing key; the previous ones stay valid for verification
               hearth auth verify TOKEN     verify an ID token: its claims as JSON (exit 0) or why it is refused (exit 1)
          --config PATH        runtime configuration (default: runtime.toml)
        """

    enum Action: Equatable, Sendable {
        case jwks, rotate
        case verify(String)
    }

    var common: CommonOptions
    var action: Action

    static func parse(_ arguments: [String]) throws(UsageError) -> AuthCommand {
        guard let verb = arguments.first else { throw UsageError("missing a subcommand: jwks, rotate-key or verify") }
        let args = try Arguments(Array(arguments.dropFirst()), valued: CommonOptions.valued)
        let action: Action
        switch verb {
        case "jwks": _ = try args.requirePositionals([]); action = .jwks
        case "rotate-key": _ = try args.requirePositionals([]); action = .rotate
        case "verify": action = .verify(try args.requirePositionals(["a token"])[0])
        default: throw UsageError("unknown subcommand 'auth \(verb)'; use jwks, rotate-key or verify")
        }
        return AuthCommand(common: try CommonOptions(args), action: action)
    }

    func run(_ io: CommandIO) async -> Int32 {
        guard let runtime = await AuthSetup.open(common, io: io) else { return ExitCode.failure }
        do {
            switch action {
            case .jwks:
                io.out(JSONWriter.string(try runtime.users.jwks(), options: .pretty))
            case .rotate:
                let rotated = try runtime.users.rotateSigningKey()
                io.out(JSONWriter.string(["activeKid": .string(rotated.activeKid), "keys": .int(Int64(rotated.keys))], options: .pretty))
            case .verify(let token):
                do {
                    let verified = try await runtime.users.verify(idToken: token)
                    io.out(JSONWriter.string(.map(verified.claims), options: .pretty))
                } catch let refusal as HTTPSError {
                    io.err("refused: \(refusal.message)")
                    return ExitCode.failure
                }
            }
            return ExitCode.success
        } catch { return DocsJSON.fail(error, io) }
    }
}
