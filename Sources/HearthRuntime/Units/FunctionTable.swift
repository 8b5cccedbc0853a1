import HearthModel

/// One function the host can run: its manifest entry and the unit that holds it.
///
/// A class, not a struct: every request takes its function's entry out of the table and hands it
/// along, and a reference moves as one word where a copy of the spec retained each of its fields.
public final class FunctionEntry: Sendable {
    public let spec: FunctionSpec
    public let unit: LoadedUnit

    init(spec: FunctionSpec, unit: LoadedUnit) {
        self.spec = spec
        self.unit = unit
    }

    public var name: String { spec.name }
    public var trigger: Trigger { spec.trigger }
}

/// The immutable routing table of every loaded function, by name. Built once from the loaded units
/// (and rebuilt, then swapped whole, when units change).
public struct FunctionTable: Sendable {
    public let entries: [FunctionEntry]
    let byName: [String: FunctionEntry]

    public static let empty = FunctionTable(entries: [])

    init(entries: [FunctionEntry]) {
        self.entries = entries
        byName = Dictionary(entries.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// Builds the table from units in order. A unit declaring a name that an earlier unit already
    /// declared is refused whole, with the clash named; the others stay.
    public static func build(_ units: [LoadedUnit]) -> (table: FunctionTable, refused: [UnitLoadError]) {
        var entries: [FunctionEntry] = []
        var owner: [String: String] = [:]
        var refused: [UnitLoadError] = []
        for unit in units {
            let clashes = unit.manifest.functions.compactMap { fn in owner[fn.name].map { (fn.name, $0) } }
            if !clashes.isEmpty {
                let list = clashes.map { "'\($0.0)' is already declared by unit \($0.1)" }.joined(separator: "; ")
                refused.append(UnitLoadError(unit: unit.name, path: unit.path, reason: "function name clash: \(list)"))
                continue
            }
            for fn in unit.manifest.functions {
                owner[fn.name] = unit.name
                entries.append(FunctionEntry(spec: fn, unit: unit))
            }
        }
        return (FunctionTable(entries: entries), refused)
    }

    public subscript(name: String) -> FunctionEntry? { byName[name] }

    public var units: [LoadedUnit] {
        var seen: Set<String> = []
        return entries.compactMap { seen.insert($0.unit.name).inserted ? $0.unit : nil }
    }

    /// The table as JSON-ready values: name, unit, trigger and options of each function.
    public var descriptions: [Value] {
        entries.map { entry in
            var m: [String: Value] = [
                "name": .string(entry.name),
                "unit": .string(entry.unit.name),
                "unitVersion": .string(entry.unit.version ?? "build"),
                "trigger": (try? ValueEncoder().encode(entry.trigger)) ?? .null,
            ]
            m["options"] = (try? ValueEncoder().encode(entry.spec.options)).map(FunctionTable.dropNulls) ?? .emptyMap
            return .map(m)
        }
    }

    public static func dropNulls(_ v: Value) -> Value {
        guard case .map(let m) = v else { return v }
        return .map(m.filter { !$0.value.isNull }.mapValues(dropNulls))
    }
}
