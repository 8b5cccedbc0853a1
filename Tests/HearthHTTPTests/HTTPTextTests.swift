import Testing
@testable import HearthHTTP

@Suite struct HTTPTextTests {
    @Test("a media type matches in any case, before its parameters, without surrounding blanks", arguments: [
        ("application/json", true),
        ("Application/JSON; charset=utf-8", true),
        (" \tapplication/json \t; charset=utf-8", true),
        ("application/json;", true),
        ("APPLICATION/JSON", true),
        ("application/jsonx", false),
        ("application/js", false),
        ("application/json+x; charset=utf-8", false),
        ("text/plain", false),
        ("", false),
        (";application/json", false),
        ("applicatioN/jsoN\u{301}", false),
    ])
    func mediaType(value: String, matches: Bool) {
        #expect(HTTPText.isMediaType(value, "application/json") == matches)
    }

    @Test("no Content-Type is no media type")
    func missing() {
        #expect(!HTTPText.isMediaType(nil, "application/json"))
    }
}
