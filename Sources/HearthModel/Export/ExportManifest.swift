/// `manifest.json` of an export: the format's version, the boundary version delivery events are
/// encoded in, when the snapshot was taken, and how many records each file holds (so an import
/// notices a file cut short at a line boundary).
public struct ExportManifest: Sendable, Equatable {
    public var formatVersion: Int
    public var boundaryVersion: Int
    public var exportTime: Timestamp
    public var counts: [ExportFormat.Kind: Int]

    public init(formatVersion: Int = ExportFormat.version, boundaryVersion: Int = Int(Boundary.version), exportTime: Timestamp,
                counts: [ExportFormat.Kind: Int]) {
        self.formatVersion = formatVersion
        self.boundaryVersion = boundaryVersion
        self.exportTime = exportTime
        self.counts = counts
    }

    public var value: Value {
        var counts: [String: Value] = [:]
        var files: [String: Value] = [:]
        for kind in ExportFormat.Kind.allCases {
            counts[kind.rawValue] = .int(Int64(self.counts[kind] ?? 0))
            files[kind.rawValue] = .string(kind.fileName)
        }
        return ["format": .string(ExportFormat.name), "formatVersion": .int(Int64(formatVersion)), "boundaryVersion": .int(Int64(boundaryVersion)),
                "exportTime": .string(exportTime.rfc3339), "counts": .map(counts), "files": .map(files)]
    }

    /// The manifest's text, indented for people.
    public var json: [UInt8] { JSONWriter.encode(value, options: .pretty) + [UInt8(ascii: "\n")] }

    /// Reads a manifest, refusing another format, a newer version, and counts that are not
    /// non-negative integers.
    public init(json: [UInt8]) throws(ExportLineError) {
        let value: Value
        do { value = try JSONParser.parse(json) } catch { throw ExportLineError("not valid JSON: \(error)") }
        guard case .map(let members) = value else { throw ExportLineError("not a JSON object") }
        var m = LineFields(members)
        let format = try m.string("format")
        guard format == ExportFormat.name else {
            throw ExportLineError(field: "format", "'\(Printable.quoted(format, limit: 60))' is not a Hearth export ('\(ExportFormat.name)')")
        }
        let version = try m.int("formatVersion", in: 1...Int64(Int32.max))
        guard version <= Int64(ExportFormat.version) else {
            throw ExportLineError(field: "formatVersion", "\(version) is newer than this hearth reads (\(ExportFormat.version)); use a newer hearth")
        }
        formatVersion = Int(version)
        boundaryVersion = Int(try m.int("boundaryVersion", in: 1...Int64(UInt32.max)))
        exportTime = try m.time("exportTime")
        guard case .map(let countValues)? = m.take("counts") else { throw ExportLineError(field: "counts", "missing, or not an object") }
        var counts: [ExportFormat.Kind: Int] = [:]
        var c = LineFields(countValues)
        for kind in ExportFormat.Kind.allCases {
            do {
                if let n = try c.optionalInt(kind.rawValue, in: 0...Int64(Int.max)) { counts[kind] = Int(n) }
            } catch { throw ExportLineError(field: "counts.\(kind.rawValue)", error.message) }
        }
        do { try c.noneLeft() } catch { throw ExportLineError(field: "counts.\(error.field ?? "")", error.message) }
        self.counts = counts
        // `files` names the files as this version does; other keys are refused as unknown.
        _ = m.take("files")
        try m.noneLeft()
    }
}

/// An import refused: where (the file, its line, or the record in a file that is one JSON
/// document) and what is wrong. Nothing was written.
public struct ImportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file's name within the import (`documents.jsonl`, `manifest.json`, `accounts.json`).
    public var file: String?
    /// 1-based.
    public var line: Int?
    /// The record, where lines do not name it (`users[3] (localId "u3")`).
    public var record: String?
    public var message: String

    public init(file: String? = nil, line: Int? = nil, record: String? = nil, _ message: String) {
        self.file = file
        self.line = line
        self.record = record
        self.message = message
    }

    /// `documents.jsonl:17: field 'path': …`, `accounts.json: users[3] (localId "u3"): …`.
    public var description: String {
        var out = ""
        if let file {
            out = file
            if let line { out += ":\(line)" }
            out += ": "
        }
        if let record { out += record + ": " }
        return out + message
    }
}
