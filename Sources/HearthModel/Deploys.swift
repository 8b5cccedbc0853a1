/// A unit library recorded by `hearth deploy`: its content hash (the version), where its copy
/// lives, and the functions it declares.
public struct UnitVersion: Sendable, Equatable {
    public var unit: String
    /// The first 16 hex digits of the library's SHA-256.
    public var version: String
    /// The content-addressed copy under the data directory (never replaced, so `dlopen` of it is
    /// always this version's image).
    public var path: String
    public var functions: [String]
    public var created: Timestamp
    public var createdBy: String

    public init(unit: String, version: String, path: String, functions: [String], created: Timestamp, createdBy: String) {
        self.unit = unit
        self.version = version
        self.path = path
        self.functions = functions
        self.created = created
        self.createdBy = createdBy
    }
}

/// One activation of a unit version: a deploy or a rollback, who did it, when, and how many
/// running hosts took it (0: it applies at the next start).
public struct DeployRecord: Sendable, Equatable {
    public enum Action: String, Sendable, Equatable { case deploy, rollback }
    public var sequence: Int64
    public var unit: String
    public var version: String
    public var action: Action
    public var time: Timestamp
    public var who: String
    public var hosts: Int

    public init(sequence: Int64 = 0, unit: String, version: String, action: Action, time: Timestamp, who: String, hosts: Int) {
        self.sequence = sequence
        self.unit = unit
        self.version = version
        self.action = action
        self.time = time
        self.who = who
        self.hosts = hosts
    }
}

/// Deploy history in the runtime's database: versions and activations. A unit's active version is
/// the one its latest activation names.
public protocol DeployStorage: Sendable {
    /// Records a version (nothing happens if it is already recorded).
    func record(_ version: UnitVersion) async throws
    /// Appends an activation; returns it with its sequence.
    func activate(_ record: DeployRecord) async throws -> DeployRecord
    func version(unit: String, version: String) throws -> UnitVersion?
    /// Versions of `unit` (every unit when nil), newest first.
    func versions(unit: String?) throws -> [UnitVersion]
    /// Activations of `unit` (every unit when nil), newest first.
    func history(unit: String?) throws -> [DeployRecord]
    /// Each deployed unit's latest activation.
    func active() throws -> [String: DeployRecord]
}
