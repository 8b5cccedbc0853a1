import HearthModel

/// `hearth deploy`'s history in the runtime's database (tables `unit_versions` and `unit_deploys`).
final class DeployTable: DeployStorage {
    let writer: Writer
    let readers: ReaderPool

    init(writer: Writer, readers: ReaderPool) {
        self.writer = writer
        self.readers = readers
    }

    func record(_ v: UnitVersion) async throws {
        let functions = JSONWriter.string(.array(v.functions.map { .string($0) }))
        try await writer.withTransaction { db in
            try db.run("INSERT OR IGNORE INTO unit_versions(unit, version, path, functions, created, created_by) VALUES (?, ?, ?, ?, ?, ?)", [
                .text(v.unit), .text(v.version), .text(v.path), .text(functions), .integer(RowEncoding.micros(v.created)), .text(v.createdBy),
            ])
        }
    }

    func activate(_ r: DeployRecord) async throws -> DeployRecord {
        let sequence = try await writer.withTransaction { db -> Int64 in
            try db.run("INSERT INTO unit_deploys(unit, version, action, time, who, hosts) VALUES (?, ?, ?, ?, ?, ?)", [
                .text(r.unit), .text(r.version), .text(r.action.rawValue), .integer(RowEncoding.micros(r.time)), .text(r.who), .integer(Int64(r.hosts)),
            ])
            return try db.scalarInt("SELECT last_insert_rowid()") ?? 0
        }
        var out = r
        out.sequence = sequence
        return out
    }

    private static let versionColumns = "unit, version, path, functions, created, created_by"

    private static func version(_ s: Statement) throws -> UnitVersion {
        let names = (try? JSONParser.parse(Array(s.text(3).utf8)))?.arrayValue?.compactMap(\.stringValue) ?? []
        return UnitVersion(unit: s.text(0), version: s.text(1), path: s.text(2), functions: names,
                           created: RowEncoding.time(s.int64(4)), createdBy: s.text(5))
    }

    func version(unit: String, version: String) throws -> UnitVersion? {
        try readers.withReader { db in
            try db.query("SELECT \(Self.versionColumns) FROM unit_versions WHERE unit = ? AND version = ?", [.text(unit), .text(version)], Self.version).first
        }
    }

    func versions(unit: String?) throws -> [UnitVersion] {
        try readers.withReader { db in
            if let unit {
                return try db.query("SELECT \(Self.versionColumns) FROM unit_versions WHERE unit = ? ORDER BY created DESC, version", [.text(unit)], Self.version)
            }
            return try db.query("SELECT \(Self.versionColumns) FROM unit_versions ORDER BY unit, created DESC, version", [], Self.version)
        }
    }

    private static func record(_ s: Statement) throws -> DeployRecord {
        DeployRecord(sequence: s.int64(0), unit: s.text(1), version: s.text(2), action: DeployRecord.Action(rawValue: s.text(3)) ?? .deploy,
                     time: RowEncoding.time(s.int64(4)), who: s.text(5), hosts: Int(s.int64(6)))
    }

    func history(unit: String?) throws -> [DeployRecord] {
        try readers.withReader { db in
            let columns = "seq, unit, version, action, time, who, hosts"
            if let unit {
                return try db.query("SELECT \(columns) FROM unit_deploys WHERE unit = ? ORDER BY seq DESC", [.text(unit)], Self.record)
            }
            return try db.query("SELECT \(columns) FROM unit_deploys ORDER BY seq DESC", [], Self.record)
        }
    }

    func active() throws -> [String: DeployRecord] {
        let rows = try readers.withReader { db in
            try db.query("""
                SELECT seq, unit, version, action, time, who, hosts FROM unit_deploys
                WHERE seq IN (SELECT MAX(seq) FROM unit_deploys GROUP BY unit)
                """, [], Self.record)
        }
        return Dictionary(rows.map { ($0.unit, $0) }, uniquingKeysWith: { a, _ in a })
    }
}
