import HearthModel

/// The `password` provider entry of a user: keyed by the address, so it follows the address and
/// exists only while the user has one and a password.
extension UserRecord {
    static let passwordProviderID = "password"

    /// Adds the entry for the current address when missing (after a password is set).
    mutating func linkPasswordProvider() {
        guard let email, !providerData.contains(where: { $0.providerId == UserRecord.passwordProviderID }) else { return }
        providerData.append(UserRecord.ProviderInfo(providerId: UserRecord.passwordProviderID, uid: email, email: email))
    }

    /// Moves the entry to a new address (after the address changes).
    mutating func movePasswordProvider(to email: String) {
        guard let i = providerData.firstIndex(where: { $0.providerId == UserRecord.passwordProviderID }) else { return }
        providerData[i].uid = email
        providerData[i].email = email
    }

    /// Drops the password and its entry.
    mutating func unlinkPassword() {
        passwordHash = nil
        passwordUpdatedAt = nil
        providerData.removeAll { $0.providerId == UserRecord.passwordProviderID }
    }

    var hasPasswordProvider: Bool { providerData.contains { $0.providerId == UserRecord.passwordProviderID } }
}
