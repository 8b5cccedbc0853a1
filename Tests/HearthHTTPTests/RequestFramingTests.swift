@testable import HearthHTTP
import HearthModel
import Testing

/// The head checks one by one (ConnectionTests sends the same kinds of heads over a socket).
@Suite struct RequestFramingTests {
    static func problem(_ headers: [(String, String)], target: String = "/x") -> Int? {
        RequestFraming.problem(rawTarget: target, headers: HTTPHeaders(headers))?.status
    }

    @Test("ordinary heads pass: tokens for names, tabs and any byte from space up (but DEL) in values")
    func ordinary() {
        #expect(Self.problem([]) == nil)
        #expect(Self.problem([("Host", "a"), ("Content-Type", "application/json; charset=utf-8"), ("Content-Length", "12")]) == nil)
        #expect(Self.problem([("X-Odd!#$%&'*+-.^_`|~9", "v"), ("User-Agent", "a\tb ~ é")]) == nil)
        #expect(Self.problem([("Content-Length", "3"), ("content-length", " 3 ")]) == nil)
        #expect(Self.problem([("Transfer-Encoding", "Chunked")]) == nil)
    }

    @Test("a name that is not a token, a control byte in a value, or a target with a space or a non-ASCII byte is a 400", arguments: [
        ([("", "v")], "/x"),
        ([("Transfer-Encoding ", "chunked")], "/x"),
        ([(" Host", "a")], "/x"),
        ([("Ä", "a")], "/x"),
        ([("X:A", "v")], "/x"),
        ([("X/A", "v")], "/x"),
        ([("X(A)", "v")], "/x"),
        ([("X-A", "one\ntwo")], "/x"),
        ([("X-A", "unit\u{1F}sep")], "/x"),
        ([("X-A", "one\u{01}two")], "/x"),
        ([("X-A", "one\rtwo")], "/x"),
        ([("X-A", "del\u{7F}")], "/x"),
        ([], "/a b"),
        ([], "/é"),
        ([("Content-Length", "3"), ("Content-Length", "4")], "/x"),
        ([("Content-Length", "-3")], "/x"),
        ([("Content-Length", "3"), ("Transfer-Encoding", "chunked")], "/x"),
    ] as [([(String, String)], String)])
    func refused(headers: [(String, String)], target: String) {
        #expect(Self.problem(headers, target: target) == 400)
    }

    @Test("repeated Content-Length values: equal ones (spaces aside) pass, any that differs is refused by name, wherever it comes")
    func repeatedLengths() {
        func message(_ values: [String]) -> String? {
            RequestFraming.problem(rawTarget: "/x", headers: HTTPHeaders(values.map { ("Content-Length", $0) }))?.message
        }
        #expect(message(["3", "3", " 3"]) == nil)
        for values in [["3", "3", "4"], ["3", "4", "4"], ["abc", "3"], ["3", ""]] {
            #expect(message(values) == "the request carries different Content-Length values", "\(values)")
        }
        #expect(message(["abc", "abc"]) == "Content-Length must be a number of bytes")
        #expect(message([""]) == "Content-Length must be a number of bytes")
    }

    @Test("a transfer coding other than chunked alone is a 501")
    func codings() {
        #expect(Self.problem([("Transfer-Encoding", "gzip")]) == 501)
        #expect(Self.problem([("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "chunked")]) == 501)
    }

    @Test("spaces and tabs around a value are trimmed, inner ones kept; a value with none comes back as it is")
    func trimming() {
        let cases = [("12", "12"), (" 12", "12"), ("12 ", "12"), ("\t12\t ", "12"), ("1 2", "1 2"), (" 1\t2 ", "1\t2"),
                     ("", ""), (" ", ""), ("\t \t", ""), ("é", "é"), (" é ", "é")]
        for (raw, trimmed) in cases { #expect(raw.trimmingASCIISpaces == trimmed, "\(Array(raw.utf8))") }
    }
}
