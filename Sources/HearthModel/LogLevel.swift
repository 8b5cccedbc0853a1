/// Log levels, lowest first.
public enum LogLevel: String, Sendable, Comparable, CaseIterable, Codable {
    case debug, info, notice, warning, error

    var rank: Int {
        switch self {
        case .debug: return 0
        case .info: return 1
        case .notice: return 2
        case .warning: return 3
        case .error: return 4
        }
    }

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rank < b.rank }
}
