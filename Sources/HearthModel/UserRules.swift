/// Firebase's rules for user fields (https://firebase.google.com/docs/auth/admin/manage-users).
public enum UserRules {
    /// Claims a developer may not set: they belong to the token itself.
    public static let reservedClaims: Set<String> = [
        "acr", "amr", "at_hash", "aud", "auth_time", "azp", "cnf", "c_hash", "exp", "firebase", "iat", "iss", "jti",
        "nbf", "nonce", "sub", "user_id",
    ]
    public static let maxClaimsBytes = 1000

    public static func checkUID(_ uid: String) throws(HTTPSError) {
        // Characters as Firebase counts them (JavaScript's UTF-16 code units), so a uid is at most
        // 384 bytes of UTF-8 and every path built from one has room to spare.
        if uid.isEmpty || uid.utf16.count > 128 { throw .invalidArgument("the uid must be a non-empty string of at most 128 characters") }
    }

    /// Identity Toolkit: "The length of the email should be less than 256 characters".
    public static let maxEmailLength = 255
    /// Identity Toolkit: "The length of the display name must be less than or equal to 256 characters".
    public static let maxDisplayNameLength = 256
    public static let maxPhotoURLLength = 2048

    public static func checkEmail(_ email: String) throws(HTTPSError) {
        guard email.utf16.count <= maxEmailLength else {
            throw .invalidArgument("the email address is longer than \(maxEmailLength) characters")
        }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
              !email.unicodeScalars.contains(where: { $0 == " " || $0.properties.generalCategory == .control || $0.properties.generalCategory == .lineSeparator }) else {
            throw .invalidArgument("the email address '\(Printable.quoted(email, limit: 80))' is improperly formatted")
        }
    }

    public static func checkDisplayName(_ name: String) throws(HTTPSError) {
        guard name.utf16.count <= maxDisplayNameLength else {
            throw .invalidArgument("the display name is longer than \(maxDisplayNameLength) characters")
        }
        guard !name.unicodeScalars.contains(where: { $0 == "\0" }) else { throw .invalidArgument("the display name contains a NUL character") }
    }


    /// E.164: `+` then 2 to 15 digits, the first not zero.
    public static func checkPhone(_ phone: String) throws(HTTPSError) {
        let digits = phone.dropFirst()
        guard phone.hasPrefix("+"), (2...15).contains(digits.count), digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber), digits.first != "0" else {
            throw .invalidArgument("the phone number '\(phone)' must be E.164 (+ then up to 15 digits)")
        }
    }

    /// A photo URL is kept as given, as Identity Toolkit and its emulator keep it (the JS SDK's
    /// own tests set 'photo-url'; the Admin SDKs check theirs before sending): at most
    /// `maxPhotoURLLength` bytes, no control characters. The same rule for every way in (clients,
    /// admin, import), so what one accepts the others take back.
    public static func checkPhotoURL(_ url: String) throws(HTTPSError) {
        guard url.utf8.count <= maxPhotoURLLength, !url.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalidArgument("the photo URL must be at most \(maxPhotoURLLength) bytes without control characters")
        }
    }

    /// Custom claims: a JSON object of at most 1000 bytes with no reserved names.
    public static func checkClaims(_ claims: [String: Value]) throws(HTTPSError) {
        let size = JSONWriter.encode(.map(claims)).count
        if size > maxClaimsBytes { throw .invalidArgument("custom claims are \(size) bytes; at most \(maxClaimsBytes) are allowed") }
        if let reserved = claims.keys.sorted().first(where: { reservedClaims.contains($0) }) {
            throw .invalidArgument("the custom claim '\(reserved)' is reserved and cannot be set")
        }
    }
}
