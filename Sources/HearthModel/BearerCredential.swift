/// The token of an `Authorization: Bearer <token>` header value. The scheme matches in any ASCII
/// case (RFC 7235 §2.1: "It uses a case-insensitive token"; firebase-functions matches its
/// callables' header with `/^Bearer (.*)$/i`), followed by one space; the token is the rest, as
/// sent. Nil for any other scheme.
public enum BearerCredential {
    public static func token(in header: String) -> Substring? {
        let scheme = "bearer "
        guard header.utf8.count >= scheme.utf8.count,
              zip(header.utf8, scheme.utf8).allSatisfy({ ASCIICase.lower($0) == $1 }) else { return nil }
        // By bytes: the scheme is ASCII, so the token starts on a scalar boundary (a Character count
        // would fold a combining mark after the space into the scheme).
        return Substring(header.utf8.dropFirst(scheme.utf8.count))
    }
}
