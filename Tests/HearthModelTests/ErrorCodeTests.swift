import HearthModel
import Testing

struct CodeRow: Sendable, CustomTestStringConvertible {
    var code: FunctionsErrorCode
    var name: String
    var canonical: String
    var status: Int
    var testDescription: String { "\(name) \(status)" }
}

let allCodeRows: [CodeRow] = [
    CodeRow(code: .ok, name: "ok", canonical: "OK", status: 200),
    CodeRow(code: .cancelled, name: "cancelled", canonical: "CANCELLED", status: 499),
    CodeRow(code: .unknown, name: "unknown", canonical: "UNKNOWN", status: 500),
    CodeRow(code: .invalidArgument, name: "invalid-argument", canonical: "INVALID_ARGUMENT", status: 400),
    CodeRow(code: .deadlineExceeded, name: "deadline-exceeded", canonical: "DEADLINE_EXCEEDED", status: 504),
    CodeRow(code: .notFound, name: "not-found", canonical: "NOT_FOUND", status: 404),
    CodeRow(code: .alreadyExists, name: "already-exists", canonical: "ALREADY_EXISTS", status: 409),
    CodeRow(code: .permissionDenied, name: "permission-denied", canonical: "PERMISSION_DENIED", status: 403),
    CodeRow(code: .resourceExhausted, name: "resource-exhausted", canonical: "RESOURCE_EXHAUSTED", status: 429),
    CodeRow(code: .failedPrecondition, name: "failed-precondition", canonical: "FAILED_PRECONDITION", status: 400),
    CodeRow(code: .aborted, name: "aborted", canonical: "ABORTED", status: 409),
    CodeRow(code: .outOfRange, name: "out-of-range", canonical: "OUT_OF_RANGE", status: 400),
    CodeRow(code: .unimplemented, name: "unimplemented", canonical: "UNIMPLEMENTED", status: 501),
    CodeRow(code: .internal, name: "internal", canonical: "INTERNAL", status: 500),
    CodeRow(code: .unavailable, name: "unavailable", canonical: "UNAVAILABLE", status: 503),
    CodeRow(code: .dataLoss, name: "data-loss", canonical: "DATA_LOSS", status: 500),
    CodeRow(code: .unauthenticated, name: "unauthenticated", canonical: "UNAUTHENTICATED", status: 401),
]

@Suite("Functions error codes")
struct ErrorCodeTests {
    @Test("each code has its wire name, canonical name and HTTP status", arguments: allCodeRows)
    func table(_ row: CodeRow) {
        #expect(row.code.rawValue == row.name)
        #expect(row.code.canonicalName == row.canonical)
        #expect(row.code.httpStatus == row.status)
        #expect(FunctionsErrorCode(name: row.name) == row.code)
        #expect(FunctionsErrorCode(name: row.canonical) == row.code)
        #expect(FunctionsErrorCode(rawValue: row.name) == row.code)
    }

    @Test("the table covers all 17 codes exactly once")
    func complete() {
        #expect(FunctionsErrorCode.allCases.count == 17)
        #expect(Set(allCodeRows.map(\.code)) == Set(FunctionsErrorCode.allCases))
        #expect(allCodeRows.count == 17)
    }

    @Test("unknown or differently written names are refused", arguments: ["", "NOTFOUND", "Not-Found", "not_found", "INVALID-ARGUMENT", "invalidArgument", " ok"])
    func badNames(_ name: String) {
        #expect(FunctionsErrorCode(name: name) == nil)
    }

    @Test("codes encode as their wire names")
    func coding() throws {
        #expect(try ValueEncoder().encode([FunctionsErrorCode.deadlineExceeded]) == ["deadline-exceeded"])
        #expect(try ValueDecoder().decode(FunctionsErrorCode.self, from: "data-loss") == .dataLoss)
    }
}

@Suite("Errors across the unit boundary")
struct RemoteErrorTests {
    @Test("a remote error survives its wire form, keeping code, message, details and debug")
    func wireRoundTrip() throws {
        let error = RemoteError(code: .permissionDenied, message: "no", details: ["why": "owner"], debug: "uid mismatch")
        #expect(try RemoteError(wireBytes: error.wireBytes) == error)
        #expect(error.description == "permission-denied: no (uid mismatch)")
        #expect(error.httpsError == HTTPSError(.permissionDenied, "no", details: ["why": "owner"]))
    }

    @Test("an error code the reader does not know becomes internal; canonical names are read too")
    func unknownCode() throws {
        func decode(code: String) throws -> RemoteError {
            var w = WireWriter()
            w.string(code)
            w.string("m")
            w.write(Value?.none)
            w.write(String?.none)
            return try RemoteError(wireBytes: w.finish())
        }
        #expect(try decode(code: "bogus").code == .internal)
        #expect(try decode(code: "NOT_FOUND").code == .notFound)
        #expect(try decode(code: "not-found").code == .notFound)
    }

    @Test("wrapping keeps Firebase errors, maps cancellation and hides anything else")
    func wrapping() {
        struct Secret: Error, CustomStringConvertible { var description: String { "db password is hunter2" } }
        let https = RemoteError(wrapping: HTTPSError.notFound("no item"))
        #expect(https.code == .notFound && https.message == "no item" && https.debug == nil)
        let remote = RemoteError(code: .aborted, message: "retry")
        #expect(RemoteError(wrapping: remote) == remote)
        #expect(RemoteError(wrapping: CancellationError()).code == .cancelled)
        let hidden = RemoteError(wrapping: Secret())
        #expect(hidden.code == .internal)
        #expect(hidden.message == "INTERNAL")
        #expect(hidden.debug == "db password is hunter2")
        #expect(hidden.httpsError.message == "INTERNAL")
    }
}

@Suite("Log levels")
struct LogLevelTests {
    @Test("levels order from debug to error")
    func ordering() {
        #expect(LogLevel.allCases == [.debug, .info, .notice, .warning, .error])
        #expect(LogLevel.allCases.sorted() == LogLevel.allCases)
        #expect(LogLevel.debug < .info && LogLevel.warning < .error && !(LogLevel.error < .notice))
        #expect(LogLevel(rawValue: "warning") == .warning)
    }
}
