/// The table tree under construction, and the rules about which table a statement may define or
/// extend (https://toml.io/en/v1.0.0#table, #array-of-tables, #inline-table, #keys).
///
/// Tables live in an arena (`nodes`) and refer to each other by index, so a header or dotted key walks
/// and extends the tree without copying it; `finish()` turns the arena into `TOMLTable` values once.
///
/// Each table remembers how it was made, which is all the redefinition rules need:
/// - created on the way to a header (`a` for `[a.b]`): *implicit*. A later header may define it once;
///   dotted keys may extend it.
/// - named by a `[header]`, or an element of `[[header]]`: *defined by header*. No other header may
///   name it and no dotted key may reach into it.
/// - created or extended by dotted keys: *defined by dotted keys* in the current section (the lines
///   since the last header). Later statements in the same section may extend it with more dotted keys;
///   after the next header it is closed to dotted keys, and a header may never name it (though a
///   header may name a new table inside it: `[fruit.apple.texture]` after `fruit.apple.color = 1`).
/// - inline tables and arrays written as values are stored as finished `TOMLValue`s and never opened
///   again, which makes them immutable.
/// An array of tables may only grow through `[[header]]`; `[header]` and dotted keys cannot name it.
/// These are the rules `tomllib` enforces too, which the corpus tests check case by case.
struct TOMLDocumentBuilder {
    enum Slot {
        /// A scalar, or an array or inline table written as a value: final.
        case value(TOMLValue)
        case table(Int)
        /// An index into `tableArrays`.
        case tableArray(Int)
    }

    struct Node {
        var names: [String] = []
        var slots: [Slot] = []
        /// Positions by key, kept once the table outgrows a linear scan.
        var index: [TOMLKey: Int]?
        var definedByHeader = false
        /// The section whose dotted keys created or extended this table, or -1.
        var dottedSection = -1

        func find(_ name: String) -> Int? {
            if let index { return index[TOMLKey(name)] }
            return names.firstIndex { TOMLKey.same($0, name) }
        }

        mutating func add(_ name: String, _ slot: Slot) {
            names.append(name)
            slots.append(slot)
            if index != nil {
                index![TOMLKey(name)] = names.count - 1
            } else if names.count > TOMLTable.indexThreshold {
                index = Dictionary(uniqueKeysWithValues: names.enumerated().map { (TOMLKey($1), $0) })
            }
        }

        func slot(_ name: String) -> Slot? { find(name).map { slots[$0] } }
    }

    var nodes: [Node] = [Node()]
    var tableArrays: [[Int]] = []
    /// The table that key/value lines go into (the root until the first header).
    var current = 0
    /// How deep `current` is: the number of key parts of its header.
    var currentDepth = 0
    /// Counts headers, so a section can recognise the tables its own dotted keys made.
    var section = 0

    // MARK: - Statements

    /// `[key]`: opens a new table, or defines one so far created only implicitly.
    mutating func openTable(_ key: [TOMLKeyPart], headerOffset: Int) throws(TOMLFailure) {
        section += 1
        var table = try walkToParent(of: key)
        let last = key[key.count - 1]
        switch nodes[table].slot(last.name) {
        case nil:
            let child = newNode()
            nodes[table].add(last.name, .table(child))
            table = child
        case .table(let child)?:
            if nodes[child].definedByHeader {
                throw TOMLFailure(offset: headerOffset, message: "table [\(Self.display(key[...]))] is defined more than once")
            }
            if nodes[child].dottedSection >= 0 {
                throw TOMLFailure(offset: headerOffset,
                                  message: "table [\(Self.display(key[...]))] was already defined by dotted keys")
            }
            table = child
        case .tableArray?:
            throw TOMLFailure(offset: headerOffset,
                              message: "\(Self.display(key[...])) is an array of tables; add elements with [[\(Self.display(key[...]))]]")
        case .value(let value)?:
            throw notATable(key[...], value, at: headerOffset)
        }
        nodes[table].definedByHeader = true
        current = table
        currentDepth = key.count
    }

    /// `[[key]]`: appends a new table to the array of tables `key`, creating the array if needed.
    mutating func appendArrayElement(_ key: [TOMLKeyPart], headerOffset: Int) throws(TOMLFailure) {
        section += 1
        let parent = try walkToParent(of: key)
        let last = key[key.count - 1]
        let element = newNode()
        nodes[element].definedByHeader = true
        switch nodes[parent].slot(last.name) {
        case nil:
            tableArrays.append([element])
            nodes[parent].add(last.name, .tableArray(tableArrays.count - 1))
        case .tableArray(let array)?:
            tableArrays[array].append(element)
        case .table?:
            throw TOMLFailure(offset: headerOffset,
                              message: "\(Self.display(key[...])) is already a table and cannot become an array of tables")
        case .value(let value)?:
            if case .array = value {
                throw TOMLFailure(offset: headerOffset,
                                  message: "cannot append to \(Self.display(key[...])) with [[ ]]: it is a static array, written as a value")
            }
            throw notATable(key[...], value, at: headerOffset)
        }
        current = element
        currentDepth = key.count
    }

    /// The parent table of a header's last key part. Headers may pass through any table, and through
    /// an array of tables to its last element, but not through values.
    mutating func walkToParent(of key: [TOMLKeyPart]) throws(TOMLFailure) -> Int {
        var table = 0
        for n in 0..<(key.count - 1) {
            let part = key[n]
            switch nodes[table].slot(part.name) {
            case nil:
                let child = newNode()
                nodes[table].add(part.name, .table(child))
                table = child
            case .table(let child)?:
                table = child
            case .tableArray(let array)?:
                table = tableArrays[array][tableArrays[array].count - 1]
            case .value(let value)?:
                throw notATable(key[...n], value, at: part.offset)
            }
        }
        return table
    }

    /// `key = value` in the current section.
    mutating func insert(_ key: [TOMLKeyPart], _ value: TOMLValue) throws(TOMLFailure) {
        var table = current
        for n in 0..<(key.count - 1) {
            let part = key[n]
            switch nodes[table].slot(part.name) {
            case nil:
                let child = newNode()
                nodes[child].dottedSection = section
                nodes[table].add(part.name, .table(child))
                table = child
            case .table(let child)?:
                if nodes[child].definedByHeader {
                    throw TOMLFailure(offset: part.offset, message:
                        "cannot add keys to table \(Self.display(key[...n])) with dotted keys: it is defined by its own [header]")
                }
                if nodes[child].dottedSection >= 0 && nodes[child].dottedSection != section {
                    throw TOMLFailure(offset: part.offset, message:
                        "cannot add keys to table \(Self.display(key[...n])): its dotted keys were defined in an earlier section")
                }
                nodes[child].dottedSection = section
                table = child
            case .tableArray?:
                throw TOMLFailure(offset: part.offset, message:
                    "cannot add keys to the array of tables \(Self.display(key[...n])) with dotted keys")
            case .value(let value)?:
                throw notATable(key[...n], value, at: part.offset)
            }
        }
        try addLeaf(key, value, to: table)
    }

    // MARK: - Inline tables

    /// Starts an inline table; its tables are made at the end of the arena, and
    /// `endInlineTable` removes them again, so inline tables nest like a stack.
    mutating func beginInlineTable() -> Int { newNode() }

    /// `key = value` inside an inline table: dotted keys may extend tables made by earlier keys of the
    /// same inline table, never a value.
    mutating func insert(_ key: [TOMLKeyPart], _ value: TOMLValue, intoInlineTable base: Int) throws(TOMLFailure) {
        var table = base
        for n in 0..<(key.count - 1) {
            let part = key[n]
            switch nodes[table].slot(part.name) {
            case nil:
                let child = newNode()
                nodes[table].add(part.name, .table(child))
                table = child
            case .table(let child)?:
                table = child
            case .value(let value)?:
                throw notATable(key[...n], value, at: part.offset)
            case .tableArray?:
                preconditionFailure("inline tables hold no arrays of tables")
            }
        }
        try addLeaf(key, value, to: table)
    }

    mutating func endInlineTable(_ base: Int) -> TOMLTable {
        let table = makeTable(base)
        nodes.removeSubrange(base...)
        return table
    }

    // MARK: - Output

    func finish() -> TOMLTable { makeTable(0) }

    func makeTable(_ index: Int) -> TOMLTable {
        let node = nodes[index]
        var entries: [(key: String, value: TOMLValue)] = []
        entries.reserveCapacity(node.names.count)
        for (name, slot) in zip(node.names, node.slots) {
            switch slot {
            case .value(let value): entries.append((name, value))
            case .table(let child): entries.append((name, .table(makeTable(child))))
            case .tableArray(let array): entries.append((name, .array(tableArrays[array].map { .table(makeTable($0)) })))
            }
        }
        return TOMLTable(uniqueEntries: entries)
    }

    // MARK: - Helpers

    mutating func newNode() -> Int {
        nodes.append(Node())
        return nodes.count - 1
    }

    mutating func addLeaf(_ key: [TOMLKeyPart], _ value: TOMLValue, to table: Int) throws(TOMLFailure) {
        let last = key[key.count - 1]
        if let existing = nodes[table].slot(last.name) {
            let what: String
            switch existing {
            case .value(let v): what = Self.article(v.typeName) + " value"
            case .table: what = "a table"
            case .tableArray: what = "an array of tables"
            }
            throw TOMLFailure(offset: last.offset, message: "duplicate key \(Self.display(key[...])): it already holds \(what)")
        }
        nodes[table].add(last.name, .value(value))
    }

    func notATable(_ key: ArraySlice<TOMLKeyPart>, _ value: TOMLValue, at offset: Int) -> TOMLFailure {
        let name = Self.display(key)
        switch value {
        case .table:
            return TOMLFailure(offset: offset, message: "cannot extend \(name): it is an inline table, complete as written")
        case .array:
            return TOMLFailure(offset: offset, message: "cannot extend \(name): it is an array, not a table")
        default:
            return TOMLFailure(offset: offset, message: "cannot use \(name) as a table: it holds \(Self.article(value.typeName)) value")
        }
    }

    static func article(_ noun: String) -> String {
        (noun.first.map { "aeiou".contains($0) } ?? false ? "an " : "a ") + noun
    }

    /// A key as it could be written back: bare parts as they are, others quoted.
    static func display(_ key: ArraySlice<TOMLKeyPart>) -> String {
        key.map { part in
            let bare = !part.name.isEmpty && part.name.utf8.allSatisfy(TOMLParser.isBareKeyByte)
            if bare { return part.name }
            var quoted = "\""
            for scalar in part.name.unicodeScalars {
                switch scalar {
                case "\"": quoted += "\\\""
                case "\\": quoted += "\\\\"
                case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                    quoted += "\\u" + String(TOMLParser.codePoint(scalar.value).dropFirst(2))
                default: quoted.unicodeScalars.append(scalar)
                }
            }
            return quoted + "\""
        }.joined(separator: ".")
    }
}
