import HearthModel
import HearthTOML

extension TOMLValue {
    /// The value as plain JSON, the form `hearth config parse` prints.
    ///
    /// - tables become maps (keys that differ only by Unicode normalisation collapse, last one wins,
    ///   because `Value.map` is keyed by Swift `String`), arrays become arrays;
    /// - integers become `.int`, booleans `.bool`, finite floats `.double`, and the non-finite floats
    ///   the strings `"inf"`, `"-inf"` and `"nan"` (JSON has no spelling for them);
    /// - dates and times become RFC 3339 strings with an uppercase `T`: `1979-05-27T07:32:00Z` (a zero
    ///   offset is always `Z`), `1979-05-27T00:32:00.5-07:00`, `1979-05-27T07:32:00`, `1979-05-27`,
    ///   `07:32:00.999999`. Fractions are truncated to microseconds, trailing zeros dropped and the
    ///   dot omitted when nothing remains, which is exactly what Python's `datetime` can hold, so the
    ///   output matches a `tomllib`-based converter byte for byte.
    public var jsonValue: Value {
        switch self {
        case .string(let s): return .string(s)
        case .integer(let n): return .int(n)
        case .float(let d):
            if d.isNaN { return .string("nan") }
            if d.isInfinite { return .string(d < 0 ? "-inf" : "inf") }
            return .double(d)
        case .boolean(let b): return .bool(b)
        case .offsetDateTime(let t): return .string(t.formatted(fractionDigits: 6))
        case .localDateTime(let t): return .string(t.formatted(fractionDigits: 6))
        case .localDate(let d): return .string(d.description)
        case .localTime(let t): return .string(t.formatted(fractionDigits: 6))
        case .array(let items): return .array(items.map(\.jsonValue))
        case .table(let table): return table.jsonValue
        }
    }
}

extension TOMLTable {
    /// The table as a JSON map; see `TOMLValue.jsonValue` for the rules.
    public var jsonValue: Value {
        var map: [String: Value] = [:]
        map.reserveCapacity(count)
        for (key, value) in entries { map[key] = value.jsonValue }
        return .map(map)
    }
}

extension RuntimeConfig {
    /// A TOML document as plain JSON (`hearth config parse`); see `TOMLValue.jsonValue`. The error
    /// names the line and column.
    public static func json(parsingTOML text: String) throws -> Value {
        try TOML.parse(text).jsonValue
    }
}
