import HearthModel

/// Pushes to devices through the host: FCM HTTP v1 when the runtime has a service account, else
/// the `log` mode, which records every push in the runtime's outbox (`hearth messages list`) so
/// an app runs with no credentials. Every push is recorded in the outbox either way.
///
/// ```swift
/// do {
///     _ = try await req.messaging.send(PushMessage(token: token, title: "Due tomorrow", body: item.title, badge: unread))
/// } catch let error as HTTPSError where Messaging.isUnregistered(error) {
///     try await secretsRef.update(["fcmToken": .null])   // the app was uninstalled: forget the token
/// }
/// ```
///
/// Errors: `not-found` with `UNREGISTERED` (the token is gone: remove it, do not retry),
/// `invalid-argument` (a bad token or message: do not retry), `unavailable` (FCM was busy or
/// unreachable: throw it on so the task queue retries), `failed-precondition` (messaging is not
/// configured).
public struct Messaging: Sendable {
    let channel: HostChannel

    /// Sends `message`; returns FCM's message name (`projects/p/messages/…`, or `log/<n>` in log mode).
    @discardableResult
    public func send(_ message: PushMessage) async throws -> String {
        try message.check()
        return try await channel.call(Boundary.SendMessage(message))
    }

    /// Whether `error` says the device's token is no longer registered.
    public static func isUnregistered(_ error: HTTPSError) -> Bool {
        error.code == .notFound && error.message.hasPrefix("UNREGISTERED")
    }
}
