import HearthModel

/// A refusal in Identity Toolkit's vocabulary: the code a client SDK maps to its error
/// (`EMAIL_EXISTS` is `AuthErrorCode.emailAlreadyInUse` on iOS), with an optional detail that
/// follows it as `CODE : detail`, and the HTTP status Google answers with.
public struct AuthFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: String
    public var detail: String?
    public var status: Int

    public init(_ code: String, _ detail: String? = nil, status: Int = 400) {
        self.code = code
        self.detail = detail
        self.status = status
    }

    /// What Identity Toolkit puts in `error.message`.
    public var message: String { detail.map { "\(code) : \($0)" } ?? code }
    public var description: String { message }

    public static let emailExists = AuthFailure("EMAIL_EXISTS")
    public static let emailNotFound = AuthFailure("EMAIL_NOT_FOUND")
    public static let invalidPassword = AuthFailure("INVALID_PASSWORD")
    /// With email enumeration protection: a wrong password and an unknown address look alike.
    public static let invalidLoginCredentials = AuthFailure("INVALID_LOGIN_CREDENTIALS")
    public static let userDisabled = AuthFailure("USER_DISABLED")
    public static let userNotFound = AuthFailure("USER_NOT_FOUND")
    public static let invalidIDToken = AuthFailure("INVALID_ID_TOKEN")
    public static let tokenExpired = AuthFailure("TOKEN_EXPIRED")
    public static let missingPassword = AuthFailure("MISSING_PASSWORD")
    public static let missingEmail = AuthFailure("MISSING_EMAIL")
    public static let missingIDToken = AuthFailure("MISSING_ID_TOKEN")
    public static let missingOobCode = AuthFailure("MISSING_OOB_CODE")
    public static let missingRequestType = AuthFailure("MISSING_REQ_TYPE")
    public static let invalidOobCode = AuthFailure("INVALID_OOB_CODE")
    public static let expiredOobCode = AuthFailure("EXPIRED_OOB_CODE")
    public static let credentialTooOld = AuthFailure("CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
    /// Firebase's words for it.
    public static let tooManyAttempts = AuthFailure("TOO_MANY_ATTEMPTS_TRY_LATER", "Access to this account has been temporarily disabled due to many failed login attempts. You can immediately restore it by resetting your password or you can try again later.")
    public static let federatedUserIDAlreadyLinked = AuthFailure("FEDERATED_USER_ID_ALREADY_LINKED")
    public static func weakPassword(minimum: Int) -> AuthFailure {
        AuthFailure("WEAK_PASSWORD", "Password should be at least \(minimum) characters")
    }
    public static func invalidEmail(_ detail: String? = nil) -> AuthFailure { AuthFailure("INVALID_EMAIL", detail) }
    public static func invalidIDPResponse(_ detail: String) -> AuthFailure { AuthFailure("INVALID_IDP_RESPONSE", detail) }
    public static func operationNotAllowed(_ method: String) -> AuthFailure {
        AuthFailure("OPERATION_NOT_ALLOWED", "the \(method) sign-in method is disabled for this project (runtime.toml [auth] providers)")
    }
    public static func invalidArgument(_ detail: String) -> AuthFailure { AuthFailure("INVALID_ARGUMENT", detail) }

    /// A failed account check (`UserRules`) as the toolkit names it.
    public static func from(_ error: HTTPSError) -> AuthFailure {
        switch error.code {
        case .alreadyExists:
            if error.message.contains("email") { return .emailExists }
            if error.message.contains("phone") { return AuthFailure("PHONE_NUMBER_EXISTS") }
            if error.message.contains("uid") { return AuthFailure("DUPLICATE_LOCAL_ID") }
            return .federatedUserIDAlreadyLinked
        case .notFound: return .userNotFound
        case .invalidArgument:
            if error.message.contains("email") { return .invalidEmail(error.message) }
            if error.message.contains("display name") { return AuthFailure("INVALID_DISPLAY_NAME", error.message) }
            if error.message.contains("photo URL") { return AuthFailure("INVALID_PHOTO_URL", error.message) }
            if error.message.contains("phone") { return AuthFailure("INVALID_PHONE_NUMBER", error.message) }
            return .invalidArgument(error.message)
        default: return AuthFailure("INTERNAL_ERROR", status: 500)
        }
    }
}
