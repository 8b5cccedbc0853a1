import Foundation
import HearthModel

/// Which invocation the current task serves a host-service call for (nil outside units): what a
/// user created in auth is attributed to, so only users created from outside become inputs.
enum RecordingOrigin {
    @TaskLocal static var invocation: UInt64?
}

extension Runtime {
    /// Starts recording into `options.directory` (see `Recorder`); a recording already running is
    /// closed first. `changes` also records the change feed from its current end (the process that
    /// runs deliveries does; CLI commands record only their inputs).
    @discardableResult
    public func startRecording(_ options: Recorder.Options, changes: Bool) async throws -> Recorder {
        let store = self.store
        let declared: [String] = table.entries.flatMap { $0.spec.options.secrets ?? [] }
        let redactor = Redactor(secrets: secrets.declaredValues(declared))
        let feed: (@Sendable (Int64) async throws -> [DocumentChange])? = changes ? { @Sendable after in try await store.engine.changes(after: after, limit: 1000) } : nil
        let process = options.process
        let header: @Sendable () -> RecordingHeader = { [weak self] in self?.recordingHeader(process: process) ?? RecordingHeader.empty(process) }
        let recorder = try Recorder(options: options, redactor: redactor, clock: clock, feedStart: try store.engine.feedEnd(), feed: feed, header: header)
        if let old = recording.set(recorder) { await old.close() }
        log.info("recording", ["directory": .string(options.directory), "file": .string(recorder.currentFile)])
        return recorder
    }

    /// Stops recording (what is pending is written first); returns the directory that was recorded into.
    @discardableResult
    public func stopRecording() async -> String? {
        guard let old = recording.set(nil) else { return nil }
        await old.close()
        return old.options.directory
    }

    /// The recorder, while recording.
    public var recorder: Recorder? { recording.recorder }

    func recordingHeader(process: String) -> RecordingHeader {
        var units: [String: String] = [:]
        for unit in table.units { units[unit.name] = unit.version ?? "build" }
        return RecordingHeader(format: RecordingHeader.currentFormat, hearth: HearthVersion.string, boundary: Int(Boundary.version), process: process,
                               pid: Int(getpid()), startedAt: clock.now(), units: units, config: config.recordedValue)
    }
}

extension RecordingHeader {
    static func empty(_ process: String) -> RecordingHeader {
        RecordingHeader(format: currentFormat, hearth: HearthVersion.string, boundary: Int(Boundary.version), process: process, pid: Int(getpid()),
                        startedAt: Timestamp(seconds: 0), units: [:], config: .null)
    }
}

extension RuntimeConfig {
    /// What a recording's header keeps of the configuration: the effective settings (`hearth
    /// config show`), which name secrets' variables and files but never hold their values.
    var recordedValue: Value { value }

    /// `[record]` as recorder options, when set.
    public func recordOptions(process: String) -> Recorder.Options? {
        record.directory.map { Recorder.Options(directory: resolve($0), maxFileBytes: record.maxFileMB << 20, process: process) }
    }
}

/// The user repository as the runtime's auth sees it: users created or deleted from outside a
/// unit (auth REST, the admin API, the CLI) become recording inputs.
struct RecordedUsers: UserRepository {
    let base: any UserRepository
    let recording: RecordingSwitch

    func create(_ user: UserRecord, time: Timestamp) async throws {
        try await base.create(user, time: time)
        if let recorder = recording.recorder, RecordingOrigin.invocation == nil { recorder.input(.userCreated(user)) }
    }

    func delete(uid: String, time: Timestamp) async throws -> UserRecord {
        let user = try await base.delete(uid: uid, time: time)
        if let recorder = recording.recorder, RecordingOrigin.invocation == nil { recorder.input(.userDeleted(uid: uid)) }
        return user
    }

    func user(uid: String) async throws -> UserRecord? { try await base.user(uid: uid) }
    func user(email: String) async throws -> UserRecord? { try await base.user(email: email) }
    func user(phoneNumber: String) async throws -> UserRecord? { try await base.user(phoneNumber: phoneNumber) }
    func user(provider: String, providerUID: String) async throws -> UserRecord? { try await base.user(provider: provider, providerUID: providerUID) }
    func update(uid: String, _ change: @escaping @Sendable (inout UserRecord) throws -> Void) async throws -> UserRecord { try await base.update(uid: uid, change) }
    func list(maxResults: Int, pageToken: String?) async throws -> (users: [UserRecord], nextPageToken: String?) { try await base.list(maxResults: maxResults, pageToken: pageToken) }
    func storeRefreshToken(hash: [UInt8], _ record: RefreshTokenRecord) async throws { try await base.storeRefreshToken(hash: hash, record) }
    func refreshToken(hash: [UInt8]) async throws -> RefreshTokenRecord? { try await base.refreshToken(hash: hash) }
    func revokeRefreshTokens(uid: String) async throws { try await base.revokeRefreshTokens(uid: uid) }
    func tokenState(uid: String) async throws -> UserTokenState? { try await base.tokenState(uid: uid) }
    func tokenStateNow(uid: String) -> ImmediateTokenState { base.tokenStateNow(uid: uid) }
    func storeOobCode(_ code: OobCode) async throws { try await base.storeOobCode(code) }
    func oobCode(_ code: String) async throws -> OobCode? { try await base.oobCode(code) }
    func takeOobCode(_ code: String) async throws -> OobCode? { try await base.takeOobCode(code) }
    func oobCodes(limit: Int) async throws -> [OobCode] { try await base.oobCodes(limit: limit) }
}
