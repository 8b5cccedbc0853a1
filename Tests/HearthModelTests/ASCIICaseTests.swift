import HearthModel
import Testing

@Suite struct ASCIICaseTests {
    @Test("only ASCII letters fold; other bytes, beyond ASCII too, compare exactly")
    func equal() {
        #expect(ASCIICase.equal("Content-Type", "content-TYPE"))
        #expect(ASCIICase.equal("", ""))
        #expect(!ASCIICase.equal("a@", "a`"))     // differ only in bit 0x20, not letters
        #expect(!ASCIICase.equal("Á", "á"))       // non-ASCII letters stay apart
        #expect(!ASCIICase.equal("\u{212A}", "k")) // KELVIN SIGN is not k
        #expect(!ASCIICase.equal("abc", "abcd"))
    }

    @Test("lower-casing changes ASCII letters only, and returns the string itself when none is upper-case")
    func lowercased() {
        #expect(ASCIICase.lowercased("Alice@Example.COM") == "alice@example.com")
        #expect(ASCIICase.lowercased("ÀLICE") == "Àlice")
        #expect(ASCIICase.lowercased("already") == "already")
        // Written in place at every length: inline strings (up to 15 bytes) and longer ones.
        for text in ["A", "Content-Type", "X-FIFTEEN-BYTES", "X-SIXTEEN-BYTES!", "Access-Control-Request-Headers", "ÀB\u{212A}" + String(repeating: "Q", count: 40)] {
            let lower = ASCIICase.lowercased(text)
            #expect(Array(lower.utf8) == text.utf8.map(ASCIICase.lower), "\(text)")
            #expect(lower.utf8.count == text.utf8.count)
        }
        #expect(ASCIICase.lower(0x5B) == 0x5B && ASCIICase.lower(0x40) == 0x40 && ASCIICase.lower(0x41) == 0x61)
    }

    @Test("a bearer credential's scheme matches in any ASCII case, followed by one space; the token is the rest, byte for byte")
    func bearerCredential() {
        #expect(BearerCredential.token(in: "Bearer abc.def") == "abc.def")
        #expect(BearerCredential.token(in: "bearer abc") == "abc")
        #expect(BearerCredential.token(in: "BEARER abc") == "abc")
        #expect(BearerCredential.token(in: "Bearer ") == "", "an empty token: the caller refuses it")
        #expect(BearerCredential.token(in: "Bearer  two") == " two", "the rest as sent")
        // A combining mark after the space belongs to the token, not to the scheme.
        #expect(BearerCredential.token(in: "Bearer \u{301}x").map { Array($0.utf8) } == Array("\u{301}x".utf8))
        for other in ["Bearer", "Bearerabc", "Basic dXNlcjpwYXNz", "", "B\u{E9}arer abc", "\u{212A}earer abc", " Bearer abc"] {
            #expect(BearerCredential.token(in: other) == nil, "\(other)")
        }
    }
}
