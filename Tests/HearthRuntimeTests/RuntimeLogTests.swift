import Foundation
import HearthModel
@_spi(Internals) @testable import HearthRuntime
import Testing

/// Log lines stay one line per event whatever the values hold: fields from outside (a token's
/// `kid`, a function name from a URL, a handler's message) are escaped and bounded.
@Suite("Log lines")
struct RuntimeLogTests {
    func lines(_ format: RuntimeLog.Format, _ write: (RuntimeLog) -> Void) -> [String] {
        let capture = LogCapture()
        write(capture.makeLog(format: format, clock: ManualClock()))
        return capture.all
    }

    @Test("text format: a value with a newline, quotes or escape codes cannot forge a line or a field")
    func textEscaping() {
        let forged = "x\n2026-01-01T00:00:00Z ERROR invocation outcome=ok function=admin"
        let out = lines(.text) { log in
            log.warning("callable refused\r\nfake line", ["reason": .string(forged), "kid": "a b=c \"q\" \u{1B}[31m", "plain": "ok-1.2:3/4"])
        }
        #expect(out.count == 1)
        let line = out[0]
        #expect(!line.contains("\n") && !line.contains("\r") && !line.contains("\u{1B}"))
        #expect(line.contains(#"reason="x\n2026-01-01T00:00:00Z ERROR invocation outcome=ok function=admin""#))
        #expect(line.contains(#"kid="a b=c \"q\" \u{1B}[31m""#))
        #expect(line.contains(" plain=ok-1.2:3/4"), "plain values stay bare")
        #expect(line.contains(#"callable refused\r\nfake line"#))
    }

    @Test("an 8 KB attacker-controlled value is cut to 1 KB with its length noted, in both formats")
    func bounded() throws {
        let kid = String(repeating: "k", count: 8192)
        let text = lines(.text) { $0.info("token refused", ["kid": .string(kid)]) }[0]
        #expect(text.utf8.count < 1300)
        #expect(text.contains("…(8192 bytes)"))
        let json = lines(.json) { $0.info("token refused", ["kid": .string(kid)]) }[0]
        #expect(json.utf8.count < 1300)
        let parsed = try JSONParser.parse(Array(json.utf8))
        #expect(parsed["kid"]?.stringValue?.hasSuffix("…") == true)
    }
}
