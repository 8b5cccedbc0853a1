import HearthModel

/// Checks of a request head that libmicrohttpd 0.9.75 does not make, each of which would let a
/// proxy in front of Hearth and Hearth frame a request differently (request smuggling, RFC 9112
/// §6.3 and §11.2). `MHD_OPTION_STRICT_FOR_CLIENT` covers none of them in this version (it only
/// requires `Host` and refuses spaces in the target at level 1, and whitespace before a header
/// colon at level -1), so Hearth checks the parsed head on the first access-handler call, before
/// any body byte is read, and answers with the connection closed.
enum RequestFraming {
    struct Problem: Sendable, Equatable {
        var status: Int
        var message: String
    }

    static func problem(rawTarget: String, headers: HTTPHeaders) -> Problem? {
        // The target as sent, before percent-decoding: no controls (a raw CR or LF would end the
        // request line for a proxy), no spaces, nothing outside ASCII.
        if rawTarget.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) {
            return Problem(status: 400, message: "the request target holds a control character, a space or a non-ASCII byte")
        }
        // The first Content-Length and whether another differs from it: no array per request.
        var length: String?
        var lengthsDiffer = false
        var codings: [String] = []
        for (name, value) in headers {
            // A header name is a token (RFC 9110 §5.1): `Transfer-Encoding ` (space before the colon)
            // and ` Host` (a folded first line) are not, though libmicrohttpd keeps them as names.
            guard !name.isEmpty, allBytes(of: name, isTokenByte) else {
                return Problem(status: 400, message: "a header name is not a token (whitespace before its colon, or a line folded into it)")
            }
            if !allBytes(of: value, { ($0 >= 0x20 || $0 == 0x09) && $0 != 0x7F }) {
                return Problem(status: 400, message: "the value of header '\(Printable.quoted(name, limit: 60))' holds a control character")
            }
            // Compared without a lower-cased copy of every name (this runs for every request).
            if HTTPHeaders.sameName(name, "content-length") {
                let trimmed = value.trimmingASCIISpaces
                if let length { lengthsDiffer = lengthsDiffer || trimmed != length } else { length = trimmed }
            } else if HTTPHeaders.sameName(name, "transfer-encoding") {
                codings.append(value.trimmingASCIISpaces)
            }
        }
        if length != nil && !codings.isEmpty {
            return Problem(status: 400, message: "a request may not carry both Content-Length and Transfer-Encoding")
        }
        if lengthsDiffer {
            return Problem(status: 400, message: "the request carries different Content-Length values")
        }
        if let length, length.isEmpty || !length.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
            return Problem(status: 400, message: "Content-Length must be a number of bytes")
        }
        if !codings.isEmpty && (codings.count > 1 || codings[0].lowercased() != "chunked") {
            return Problem(status: 501, message: "the only transfer coding this server reads is chunked")
        }
        return nil
    }

    /// tchar: `!#$%&'*+-.^_`|~`, digits and letters.
    static func isTokenByte(_ b: UInt8) -> Bool {
        switch b {
        case 48...57, 65...90, 97...122: return true
        case 33, 35, 36, 37, 38, 39, 42, 43, 45, 46, 94, 95, 96, 124, 126: return true
        default: return false
        }
    }

    /// Whether every UTF-8 byte of `text` passes `test`: over the string's own buffer when it has
    /// one (every header of every request comes through here).
    static func allBytes(of text: String, _ test: (UInt8) -> Bool) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(test) } ?? text.utf8.allSatisfy(test)
    }
}

extension String {
    /// The string without the spaces and tabs around it: itself, with nothing copied, when it has
    /// none (a Content-Length value of every request comes through here).
    var trimmingASCIISpaces: String {
        let isSpace = { (b: UInt8) in b == 0x20 || b == 0x09 }
        guard let first = utf8.first, let last = utf8.last, isSpace(first) || isSpace(last) else { return self }
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return String(s)
    }
}
