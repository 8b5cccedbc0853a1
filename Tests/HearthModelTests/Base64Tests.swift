import Foundation
import HearthModel
import Testing

@Suite("Base64")
struct Base64Tests {
    @Test("RFC 4648 test vectors encode and decode", arguments: [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ])
    func vectors(_ plain: String, _ encoded: String) {
        #expect(Base64.encode(Array(plain.utf8)) == encoded)
        #expect(Base64.decode(encoded) == Array(plain.utf8))
        #expect(Base64.decode(encoded, requirePadding: true) == Array(plain.utf8))
        let unpadded = String(encoded.prefix { $0 != "=" })
        #expect(Base64.encode(Array(plain.utf8), padding: false) == unpadded)
        #expect(Base64.decode(unpadded) == Array(plain.utf8))
        #expect(Base64.decodeURL(unpadded) == Array(plain.utf8))
    }

    @Test("the URL-safe alphabet uses - and _ and no padding")
    func urlSafe() {
        let bytes: [UInt8] = [0xFB, 0xFF, 0xBF]
        #expect(Base64.encode(bytes) == "+/+/")
        #expect(Base64.encodeURL(bytes) == "-_-_")
        #expect(Base64.decodeURL("-_-_") == bytes)
        #expect(Base64.decodeURL("+/+/") == nil)
        #expect(Base64.decode("-_-_") == nil)
        #expect(Base64.decodeURL("Zg==") == nil)
        #expect(Base64.decodeURL("Zg"[...]) == [0x66])
    }

    @Test("malformed input is refused", arguments: [
        "Z", "Zg=", "Z===", "Zg==Zg==", "Zh==", "Zm9=", "Zm 9v", "Zm9v\n", "é", "Zg==\u{0}", "====", "Zm9v=",
    ])
    func malformed(_ text: String) {
        #expect(Base64.decode(text) == nil)
    }

    @Test("padding can be required")
    func requirePadding() {
        #expect(Base64.decode("Zg") == [0x66])
        #expect(Base64.decode("Zg", requirePadding: true) == nil)
    }

    @Test("random bytes round-trip and match Foundation's encoding")
    func random() {
        var rng = SplitMix64(seed: 64)
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0...48, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let encoded = Base64.encode(bytes)
            #expect(encoded == Data(bytes).base64EncodedString())
            #expect(Base64.decode(encoded) == bytes)
            #expect(Base64.decodeURL(Base64.encodeURL(bytes)) == bytes)
        }
    }
}
