import Foundation
@testable import HearthCLI
import HearthModel
import Testing

@Suite("hearth users, token, auth")
struct AuthCommandTests {
    func config(_ dir: TempDir) -> String {
        dir.write("runtime.toml", "project = \"hearth-cli\"\ndata_dir = \"data\"\nunits_dir = \"\(buildDirectory)\"\nunits = [\"EchoUnit\"]\n")
    }

    @Test("users create, get (by uid and email), update, claims, list and delete")
    func users() async throws {
        let dir = TempDir()
        let c = config(dir)
        let (created, out) = await run(["users", "create", "--uid", "alice", "--email", "alice@example.com", "--name", "Alice", "--config", c])
        #expect(created == 0, "\(out.stderr)")
        #expect(try JSONParser.parse(out.stdout)["displayName"] == "Alice")
        let (_, byEmail) = await run(["users", "get", "--email", "ALICE@example.com", "--config", c])
        #expect(try JSONParser.parse(byEmail.stdout)["uid"] == "alice")
        let (_, updated) = await run(["users", "update", "alice", "--disabled", "true", "--config", c])
        #expect(try JSONParser.parse(updated.stdout)["disabled"] == true)
        let (_, claims) = await run(["users", "claims", "alice", #"{"role": "admin"}"#, "--config", c])
        #expect(try JSONParser.parse(claims.stdout)["customClaims"] == ["role": "admin"])
        let (_, list) = await run(["users", "list", "--config", c])
        #expect(try JSONParser.parse(list.stdout)["users"]?.arrayValue?.count == 1)
        let (deleted, _) = await run(["users", "delete", "alice", "--config", c])
        #expect(deleted == 0)
        let (missing, missingOut) = await run(["users", "get", "alice", "--config", c])
        #expect(missing == 1)
        #expect(missingOut.stderr.contains("not-found"))
    }

    @Test("users refuses bad input with a message", arguments: [
        (["users", "frob"], "unknown subcommand"),
        (["users", "get"], "exactly one of"),
        (["users", "get", "a", "--email", "b@c.d"], "exactly one of"),
        (["users", "update", "a", "--disabled", "maybe"], "true or false"),
        (["users", "claims", "a", "[1]"], "JSON object"),
        (["users", "claims", "a"], "missing the claims"),
    ])
    func usersErrors(args: [String], message: String) async throws {
        let dir = TempDir()
        let (code, out) = await run(args + ["--config", config(dir)])
        #expect(code == 2)
        #expect(out.stderr.contains(message), "\(out.stderr)")
    }

    @Test("hearth token prints an ID token that auth verify accepts (exit 0) and a tampered one it refuses (exit 1)")
    func tokenAndVerify() async throws {
        let dir = TempDir()
        let c = config(dir)
        let (code, out) = await run(["token", "--uid", "bob", "--claims", #"{"plan": "pro"}"#, "--config", c])
        #expect(code == 0)
        let token = out.stdout
        #expect(token.split(separator: ".").count == 3)
        let (ok, verified) = await run(["auth", "verify", token, "--config", c])
        #expect(ok == 0)
        let claims = try JSONParser.parse(verified.stdout)
        #expect(claims["sub"] == "bob")
        #expect(claims["plan"] == "pro")
        #expect(claims["aud"] == "hearth-cli")
        var parts = token.split(separator: ".").map(String.init)
        parts[1] = Base64.encodeURL(JSONWriter.encode(["sub": "mallory", "aud": "hearth-cli"]))
        let (refused, why) = await run(["auth", "verify", parts.joined(separator: "."), "--config", c])
        #expect(refused == 1)
        #expect(why.stderr.contains("refused: the signature does not match"))
        let (reserved, reservedOut) = await run(["token", "--uid", "bob", "--claims", #"{"sub": "x"}"#, "--config", c])
        #expect(reserved == 2)
        #expect(reservedOut.stderr.contains("reserved"))
    }

    @Test("hearth call --as uses a real, verified ID token: the handler sees its claims")
    func callAs() async throws {
        let dir = TempDir()
        let c = config(dir)
        _ = await run(["users", "create", "--uid", "carol", "--email", "carol@example.com", "--config", c])
        _ = await run(["users", "claims", "carol", #"{"tier": 3}"#, "--config", c])
        let (code, out) = await run(["call", "whoami", "--as", "carol", "--config", c])
        #expect(code == 0)
        let who = try JSONParser.parse(out.stdout)
        #expect(who["uid"] == "carol")
        #expect(who["claims"]?["tier"] == 3)
        #expect(who["claims"]?["email"] == "carol@example.com")
        #expect(who["claims"]?["iss"] == "https://securetoken.google.com/hearth-cli")
    }

    @Test("auth jwks lists the keys; rotate-key adds one and old tokens still verify")
    func jwksAndRotation() async throws {
        let dir = TempDir()
        let c = config(dir)
        let (_, token) = await run(["token", "--uid", "dan", "--config", c])
        let (_, jwks) = await run(["auth", "jwks", "--config", c])
        #expect(try JSONParser.parse(jwks.stdout)["keys"]?.arrayValue?.count == 1)
        let (rotated, _) = await run(["auth", "rotate-key", "--config", c])
        #expect(rotated == 0)
        let (_, after) = await run(["auth", "jwks", "--config", c])
        #expect(try JSONParser.parse(after.stdout)["keys"]?.arrayValue?.count == 2)
        let (ok, _) = await run(["auth", "verify", token.stdout, "--config", c])
        #expect(ok == 0)
        let attributes = try FileManager.default.attributesOfItem(atPath: dir.path + "/data/auth-keys.json")
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }
}
