import HearthModel

/// How rows hold documents and times.
enum RowEncoding {
    /// Times are stored as microseconds since the epoch (Firestore's precision).
    static func micros(_ t: Timestamp) -> Int64 { t.microsecondsSinceEpoch }
    static func time(_ micros: Int64) -> Timestamp { Timestamp(microseconds: micros) }

    static func encodeFields(_ fields: [String: Value]) -> [UInt8] {
        BinaryValueCodec.encode(.map(fields))
    }

    static func decodeFields(_ bytes: UnsafeBufferPointer<UInt8>) throws -> [String: Value] {
        guard case .map(let m) = try BinaryValueCodec.decode(bytes) else {
            throw HTTPSError(.dataLoss, "a stored document is not a map")
        }
        return m
    }

    /// A document as the change feed stores it.
    static func encodeDocument(_ doc: StoredDocument) -> [UInt8] {
        BinaryValueCodec.encode(["fields": .map(doc.fields), "createTime": .timestamp(doc.createTime), "updateTime": .timestamp(doc.updateTime)])
    }

    /// The same bytes as `encodeDocument`, built around fields that are already encoded (a map
    /// with keys createTime, fields, updateTime: the binary codec's layout, written directly).
    static func encodeDocument(fieldsBytes: [UInt8], createTime: Timestamp, updateTime: Timestamp) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(fieldsBytes.count + 48)
        out.append(11)  // BinaryValueCodec.Tag.map
        out.append(3)   // three members (varint)
        appendKey("fields", &out)
        out.append(contentsOf: fieldsBytes)
        appendKey("createTime", &out)
        BinaryValueCodec.encode(.timestamp(createTime), into: &out)
        appendKey("updateTime", &out)
        BinaryValueCodec.encode(.timestamp(updateTime), into: &out)
        return out
    }

    /// A map key in the binary codec's layout: varint length and UTF-8 bytes (no tag).
    private static func appendKey(_ key: StaticString, _ out: inout [UInt8]) {
        key.withUTF8Buffer { bytes in
            out.append(UInt8(bytes.count))
            out.append(contentsOf: bytes)
        }
    }

    static func decodeDocument(_ bytes: [UInt8], path: DocumentPath) throws -> StoredDocument {
        let v = try BinaryValueCodec.decode(bytes)
        guard case .map(let fields)? = v["fields"], let c = v["createTime"]?.timestampValue, let u = v["updateTime"]?.timestampValue else {
            throw HTTPSError(.dataLoss, "a change feed entry for \(path) is malformed")
        }
        return StoredDocument(path: path, fields: fields, createTime: c, updateTime: u)
    }
}

extension ChangeKind {
    var code: Int64 {
        switch self {
        case .created: return 0
        case .updated: return 1
        case .deleted: return 2
        }
    }

    init?(code: Int64) {
        switch code {
        case 0: self = .created
        case 1: self = .updated
        case 2: self = .deleted
        default: return nil
        }
    }
}
