import HearthModel

/// The messaging outbox in the runtime's database (`hearth messages list` reads it).
final class OutboxTable: OutboxStorage {
    let writer: Writer
    let readers: ReaderPool

    init(writer: Writer, readers: ReaderPool) {
        self.writer = writer
        self.readers = readers
    }

    func record(time: Timestamp, function: String, message: PushMessage, outcome: String, messageID: String?) async throws -> Int64 {
        let bytes = message.wireBytes
        return try await writer.withTransaction { db in
            try db.run("INSERT INTO outbox(time, function, message, outcome, message_id) VALUES (?, ?, ?, ?, ?)", [
                .integer(RowEncoding.micros(time)), .text(function), .blob(bytes), .text(outcome), messageID.map { .text($0) } ?? .null,
            ])
            return try db.scalarInt("SELECT last_insert_rowid()") ?? 0
        }
    }

    func entries(after sequence: Int64, limit: Int) throws -> [OutboxEntry] {
        try readers.withReader { db in
            try db.query("SELECT seq, time, function, message, outcome, message_id FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?",
                         [.integer(sequence), .integer(Int64(limit))]) { s in
                OutboxEntry(sequence: s.int64(0), time: RowEncoding.time(s.int64(1)), function: s.text(2),
                            message: try PushMessage(wireBytes: s.blob(3)), outcome: s.text(4), messageID: s.isNull(5) ? nil : s.text(5))
            }
        }
    }
}
