/// Day, month and ordinal words shared by both syntaxes (all lowercase).
enum Names {
    /// 3-letter day names; 0 = Sunday.
    static let shortDays = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
    static let longDays = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
    /// 3-letter month names; index 0 = January (month 1).
    static let shortMonths = ["jan", "feb", "mar", "apr", "may", "jun",
                              "jul", "aug", "sep", "oct", "nov", "dec"]
    static let longMonths = ["january", "february", "march", "april", "may", "june",
                             "july", "august", "september", "october", "november", "december"]

    /// Cron day-of-week names (3 letters only): weekday 0...6.
    static let cronDays = table(shortDays, offset: 0)
    /// Cron month names (3 letters only): month 1...12.
    static let cronMonths = table(shortMonths, offset: 1)
    /// English day names: full or 3 letters.
    static let days = table(shortDays, offset: 0).merging(table(longDays, offset: 0)) { a, _ in a }
    /// English month names: full or 3 letters.
    static let months = table(shortMonths, offset: 1).merging(table(longMonths, offset: 1)) { a, _ in a }
    /// English ordinals 1...5.
    static let ordinals: [String: Int] = [
        "1st": 1, "2nd": 2, "3rd": 3, "4th": 4, "5th": 5,
        "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5,
    ]

    private static func table(_ names: [String], offset: Int) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0 + offset) })
    }
}
