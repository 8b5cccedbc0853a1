import Foundation
import HearthModel
import HearthRuntime

/// Document JSON for the CLI: tagged JSON (timestamps as {"$timestamp": …}) so it reads back exactly.
enum DocsJSON {
    static func document(_ doc: StoredDocument) -> Value {
        ["path": .string(doc.path.description), "fields": .map(doc.fields),
         "createTime": .string(doc.createTime.rfc3339), "updateTime": .string(doc.updateTime.rfc3339)]
    }

    static func print(_ value: Value, _ io: CommandIO, pretty: Bool = true) {
        io.out(JSONWriter.string(value, options: JSONWriteOptions(style: .tagged, sortKeys: true, pretty: pretty)))
    }

    static func parse(_ text: String, what: String) throws(UsageError) -> Value {
        do { return try JSONParser.parse(text, options: .clientBody) } catch {
            throw UsageError("\(what) is not valid JSON: \(error)")
        }
    }

    static func fail(_ error: Error, _ io: CommandIO) -> Int32 {
        if let e = error as? HTTPSError { io.err("error: \(e.code.rawValue): \(e.message)") } else { io.err("error: \(error)") }
        return ExitCode.failure
    }
}

/// `hearth docs get PATH`
struct DocsGetCommand: Command {
    static let path = ["docs", "get"]
    static let summary = "Print a document of the local store as JSON"
    static let help = """
        usage: hearth docs get PATH [--config PATH]

        Prints the document at PATH (members/alice/profiles/basic) with its fields, create and update
        times, as tagged JSON. Exits 1 when it does not exist.
        \(CommonOptions.help)
        """

    var common: CommonOptions
    var document: DocumentPath

    static func parse(_ arguments: [String]) throws(UsageError) -> DocsGetCommand {
        let args = try Arguments(arguments, valued: CommonOptions.valued)
        let p = try args.requirePositionals(["a document path"])
        do { return DocsGetCommand(common: try CommonOptions(args), document: try DocumentPath(p[0])) } catch let e as HTTPSError {
            throw UsageError(e.message)
        } catch let e as UsageError {
            throw e
        } catch {
            throw UsageError("\(error)")
        }
    }

    func run(_ io: CommandIO) async -> Int32 {
        guard let (_, store) = await StoreSetup.open(common, io: io) else { return ExitCode.failure }
        do {
            guard let doc = try await store.get(document) else {
                io.err("error: no document at \(document)")
                return ExitCode.failure
            }
            DocsJSON.print(DocsJSON.document(doc), io)
            return ExitCode.success
        } catch { return DocsJSON.fail(error, io) }
    }
}

/// `hearth docs set PATH --data JSON [--merge | --create]`
struct DocsSetCommand: Command {
    static let path = ["docs", "set"]
    static let summary = "Write a document of the local store from JSON"
    static let help = """
        usage: hearth docs set PATH (--data JSON | --data-file FILE) [--merge | --create] [--config PATH]

        Replaces the document at PATH with the JSON object given (Hearth's tags such as
        {"$timestamp": "…"} give other types). --merge merges the fields into the document instead;
        --create fails if the document exists. Prints the write's update time.
        \(CommonOptions.help)
        """

    enum Mode: Equatable, Sendable { case set, merge, create }

    var common: CommonOptions
    var document: DocumentPath
    var data: String?
    var dataFile: String?
    var mode: Mode

    static func parse(_ arguments: [String]) throws(UsageError) -> DocsSetCommand {
        let args = try Arguments(arguments, valued: CommonOptions.valued.union(["data", "data-file"]), boolean: ["merge", "create"])
        let p = try args.requirePositionals(["a document path"])
        if args.flag("merge") && args.flag("create") { throw UsageError("use either --merge or --create") }
        if (args.value("data") == nil) == (args.value("data-file") == nil) { throw UsageError("give the fields with --data or --data-file") }
        let path: DocumentPath
        do { path = try DocumentPath(p[0]) } catch { throw UsageError(error.message) }
        return DocsSetCommand(common: try CommonOptions(args), document: path, data: args.value("data"), dataFile: args.value("data-file"),
                              mode: args.flag("merge") ? .merge : (args.flag("create") ? .create : .set))
    }

    func run(_ io: CommandIO) async -> Int32 {
        let text: String
        if let data { text = data } else {
            guard let bytes = io.readFile(dataFile!) else { io.err("error: cannot read \(dataFile!)"); return ExitCode.failure }
            text = String(decoding: bytes, as: UTF8.self)
        }
        let value: Value
        do { value = try DocsJSON.parse(text, what: "the data") } catch { io.err("error: \(error.message)"); return ExitCode.usage }
        guard case .map(let fields) = value else { io.err("error: the data must be a JSON object"); return ExitCode.usage }
        guard let (_, store) = await StoreSetup.open(common, io: io) else { return ExitCode.failure }
        let write: DocumentWrite
        switch mode {
        case .set: write = .set(document, fields)
        case .merge: write = .merge(document, fields)
        case .create: write = .create(document, fields)
        }
        do {
            let result = try await store.commit([write])
            DocsJSON.print(["updateTime": .string(result.writeResults[0].updateTime?.rfc3339 ?? result.commitTime.rfc3339)], io)
            return ExitCode.success
        } catch { return DocsJSON.fail(error, io) }
    }
}

/// `hearth docs delete PATH [--recursive]`
struct DocsDeleteCommand: Command {
    static let path = ["docs", "delete"]
    static let summary = "Delete a document (or, recursively, a subtree) of the local store"
    static let help = """
        usage: hearth docs delete PATH [--recursive] [--config PATH]

        Deletes the document at PATH. With --recursive, PATH may be a document or a collection and
        everything beneath it is deleted, in batches (safe to run again if interrupted).
        \(CommonOptions.help)
        """

    var common: CommonOptions
    var path: [String]
    var recursive: Bool

    static func parse(_ arguments: [String]) throws(UsageError) -> DocsDeleteCommand {
        let args = try Arguments(arguments, valued: CommonOptions.valued, boolean: ["recursive"])
        let p = try args.requirePositionals(["a path"])
        let segments: [String]
        do { segments = try PathRules.segments(p[0], document: args.flag("recursive") ? nil : true) } catch { throw UsageError(error.message) }
        return DocsDeleteCommand(common: try CommonOptions(args), path: segments, recursive: args.flag("recursive"))
    }

    func run(_ io: CommandIO) async -> Int32 {
        guard let (_, store) = await StoreSetup.open(common, io: io) else { return ExitCode.failure }
        do {
            if recursive {
                let n = try await store.recursiveDelete(path)
                DocsJSON.print(["deleted": .int(Int64(n))], io)
            } else {
                try await store.commit([.delete(DocumentPath(trustedSegments: path))])
                DocsJSON.print(["deleted": 1], io)
            }
            return ExitCode.success
        } catch { return DocsJSON.fail(error, io) }
    }
}

/// `hearth docs query COLLECTION [--where …] [--order-by …] [--limit N]`
struct DocsQueryCommand: Command {
    static let path = ["docs", "query"]
    static let summary = "Query a collection (or collection group) of the local store"
    static let help = """
        usage: hearth docs query COLLECTION [--group] [--where 'FIELD OP JSON']… [--order-by FIELD[:desc]]…
                                 [--limit N | --limit-to-last N] [--count] [--config PATH]

        Runs a query and prints the matching documents as a JSON array (or, with --count, their number).
        OP is one of == != < <= > >= in not-in array-contains array-contains-any; the value is JSON,
        e.g. --where 'targetDate == null' --where 'tags array-contains "work"'. --group queries every
        collection named COLLECTION at any depth.
        \(CommonOptions.help)
        """

    var common: CommonOptions
    var spec: QuerySpec
    var count: Bool

    static func parse(_ arguments: [String]) throws(UsageError) -> DocsQueryCommand {
        let args = try Arguments(arguments, valued: CommonOptions.valued.union(["where", "order-by", "limit", "limit-to-last"]), boolean: ["group", "count"])
        let p = try args.requirePositionals(["a collection path"])
        var spec: QuerySpec
        do {
            if args.flag("group") {
                spec = try QuerySpec(group: p[0])
            } else {
                spec = QuerySpec(collection: try CollectionPath(p[0]))
            }
            for clause in args.allValues("where") { spec.filters.append(try parseWhere(clause)) }
            for order in args.allValues("order-by") {
                let parts = order.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                guard let name = parts.first, !name.isEmpty else { throw UsageError("--order-by needs a field (FIELD or FIELD:asc|desc)") }
                let field = name == "__name__" ? FieldPath.documentID : try FieldPath(name)
                guard parts.count == 1 || ["asc", "desc"].contains(parts[1]) else { throw UsageError("--order-by direction must be asc or desc (got '\(parts[1])')") }
                spec.orderBy.append(QuerySpec.Order(field, parts.count > 1 && parts[1] == "desc" ? .descending : .ascending))
            }
            if let n = try args.int("limit") { spec.limit = n }
            if let n = try args.int("limit-to-last") {
                if spec.limit != nil { throw UsageError("use either --limit or --limit-to-last") }
                spec.limit = n
                spec.limitToLast = true
            }
            try spec.validate()
        } catch let e as HTTPSError {
            throw UsageError(e.message)
        } catch let e as UsageError {
            throw e
        } catch {
            throw UsageError("\(error)")
        }
        return DocsQueryCommand(common: try CommonOptions(args), spec: spec, count: args.flag("count"))
    }

    static func parseWhere(_ clause: String) throws -> QuerySpec.Filter {
        let parts = clause.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true).map(String.init)
        guard parts.count == 3 else { throw UsageError("--where needs 'FIELD OP VALUE' (got '\(clause)')") }
        guard let op = QuerySpec.Operator(rawValue: parts[1]) else {
            throw UsageError("unknown operator '\(parts[1])' in --where; use one of \(QuerySpec.Operator.allCases.map(\.rawValue).joined(separator: " "))")
        }
        let field = parts[0] == "__name__" ? FieldPath.documentID : try FieldPath(parts[0])
        return QuerySpec.Filter(field, op, try DocsJSON.parse(parts[2], what: "the value in --where '\(clause)'"))
    }

    func run(_ io: CommandIO) async -> Int32 {
        guard let (_, store) = await StoreSetup.open(common, io: io) else { return ExitCode.failure }
        do {
            if count {
                DocsJSON.print(["count": .int(Int64(try await store.count(spec)))], io)
            } else {
                DocsJSON.print(.array(try await store.query(spec).map(DocsJSON.document)), io)
            }
            return ExitCode.success
        } catch { return DocsJSON.fail(error, io) }
    }
}

/// `hearth docs export [PATH]`
struct DocsExportCommand: Command {
    static let path = ["docs", "export"]
    static let summary = "Export documents of the local store as JSON lines"
    static let help = """
        usage: hearth docs export [PATH] [--config PATH]

        Prints every document (or every document at and beneath PATH, a document or a collection)
        as one JSON object per line: {"path", "fields", "createTime", "updateTime"}.
        \(CommonOptions.help)
        """

    var common: CommonOptions
    var root: [String]?

    static func parse(_ arguments: [String]) throws(UsageError) -> DocsExportCommand {
        let args = try Arguments(arguments, valued: CommonOptions.valued)
        let p = try args.requirePositionals(["a path"], optional: 1)
        var root: [String]?
        if let first = p.first {
            do { root = try PathRules.segments(first, document: nil) } catch { throw UsageError(error.message) }
        }
        return DocsExportCommand(common: try CommonOptions(args), root: root)
    }

    func run(_ io: CommandIO) async -> Int32 {
        guard let (_, store) = await StoreSetup.open(common, io: io) else { return ExitCode.failure }
        do {
            var roots: [[String]]
            if let root { roots = [root] } else { roots = try await store.listCollections(under: nil).map(\.segments) }
            for r in roots {
                let paths = try await store.paths(under: r).sorted()
                for chunk in stride(from: 0, to: paths.count, by: 500) {
                    for doc in try await store.getAll(Array(paths[chunk..<min(chunk + 500, paths.count)])).compactMap({ $0 }) {
                        DocsJSON.print(DocsJSON.document(doc), io, pretty: false)
                    }
                }
            }
            return ExitCode.success
        } catch { return DocsJSON.fail(error, io) }
    }
}
