import HearthModel
import Testing

@Suite struct HTTPHeadersTests {
    @Test("names compare without ASCII case; other bytes must match exactly")
    func sameName() {
        #expect(HTTPHeaders.sameName("Content-Type", "content-type"))
        #expect(HTTPHeaders.sameName("X-API-KEY", "x-api-key"))
        #expect(!HTTPHeaders.sameName("content-type", "content-typ"))
        #expect(!HTTPHeaders.sameName("content_type", "content-type"))
        // '@' and '`' differ from each other only in bit 0x20 but are not letters.
        #expect(!HTTPHeaders.sameName("a@", "a`"))
        #expect(!HTTPHeaders.sameName("[", "{"))
    }

    @Test("a name lower-cased: the same string when already lower-case")
    func lowercasedName() {
        #expect(HTTPHeaders.lowercasedName("Content-Type") == "content-type")
        #expect(HTTPHeaders.lowercasedName("X-Firebase-AppCheck") == "x-firebase-appcheck")
        #expect(HTTPHeaders.lowercasedName("authorization") == "authorization")
        #expect(HTTPHeaders.lowercasedName("") == "")
        // Only ASCII letters change, whether or not an ASCII one is upper-case.
        #expect(HTTPHeaders.lowercasedName("XÄ") == "xÄ")
        #expect(HTTPHeaders.lowercasedName("xÄ") == "xÄ")
    }

    @Test("lookup finds the first value in any case; values keeps every one in order")
    func lookup() {
        let headers = HTTPHeaders([("Accept", "a"), ("ACCEPT", "b"), ("Origin", "https://x")])
        #expect(headers["accept"] == "a")
        #expect(headers.values("Accept") == ["a", "b"])
        #expect(headers["origin"] == "https://x")
        #expect(headers["missing"] == nil)
    }
}
