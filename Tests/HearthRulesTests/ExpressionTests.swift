import HearthModel
@testable import HearthRules
import Testing

/// Every operator, method and function, through `allow get: if <expression>` on a stored
/// document: each row says whether the request is allowed.
@Suite("Rules expressions")
struct ExpressionTests {
    static let stored: [String: Value] = [
        "title": "Hello", "count": 3, "nested": ["x": 1], "tags": ["a", "b"], "owner": "alice",
        "ref": .reference("members/alice"), "when": .timestamp(Timestamp(seconds: 1_600_000_000)),
        "place": .geoPoint(GeoPoint(latitude: 37.5, longitude: 127)), "blob": .bytes([1, 2, 3]),
    ]

    static func decide(_ expression: String, auth: RulesAuth? = alice, existing: [String: Value]? = stored) throws -> RulesDecision {
        let rules = try load(rulesFile("""
                match /things/{id} {
                  allow get: if \(expression);
                }
            """))
        return rules.authorize(.get(try path("things/t1"), existing: existing, auth: auth, time: testTime))
    }

    struct Row: Sendable, CustomStringConvertible {
        var expression: String
        var allowed: Bool
        var description: String { "\(expression) → \(allowed ? "allow" : "deny")" }
        init(_ expression: String, _ allowed: Bool) {
            self.expression = expression
            self.allowed = allowed
        }
    }

    static let operators: [Row] = [
        Row("true", true), Row("false", false),
        Row("1 == 1", true), Row("1 == 1.0", true), Row("1 != 2", true), Row("1 == '1'", false),
        Row("null == null", true), Row("[1, 2] == [1, 2]", true), Row("[1, 2] == [2, 1]", false),
        Row("{'a': 1, 'b': [true]} == {'b': [true], 'a': 1}", true), Row("{'a': 1, 'b': [true]} == {'b': [true], 'a': 1.0}", false),
        Row("1 + 2 * 3 == 7", true), Row("(1 + 2) * 3 == 9", true), Row("7 / 2 == 3", true), Row("-7 / 2 == -3", true),
        Row("7 % 3 == 1", true), Row("7.0 / 2 == 3.5", true), Row("1 + 0.5 == 1.5", true), Row("-3 < 0", true),
        Row("'a' + 'b' == 'ab'", true), Row("[1] + [2] == [1, 2]", true),
        Row("!(1 > 2)", true), Row("2 >= 2 && 2 <= 2 && 1 < 2 && 3 > 2", true),
        Row("'abc' < 'abd'", true), Row("'B' < 'a'", true), Row("1 < 1.5", true),
        Row("1 < 'a'", false), Row("null < 1", false), Row("[1] < [2]", false),
        Row("1 < 2 ? true : false", true), Row("1 > 2 ? true : false", false), Row("false ? false : true", true),
        Row("2 in [1, 2, 3]", true), Row("2.0 in [1, 2, 3]", false), Row("2.0 in [1, 2, 3].toSet()", true), Row("4 in [1, 2, 3]", false),
        Row("'a' in {'a': 1}", true), Row("!('b' in {'a': 1})", true), Row("1 in {'a': 1}", false), Row("1 in 'abc'", false),
        Row("'x' is string", true), Row("1 is int", true), Row("1 is float", false), Row("1.5 is float", true),
        Row("1 is number && 1.5 is number", true), Row("[1] is list", true), Row("{} is map", true),
        Row("true is bool", true), Row("{'a': 1}.diff({}) is map_diff", true), Row("{'a': 1} is map_diff", false), Row("'x' is int", false),
        Row("request.time is timestamp", true), Row("duration.value(1, 's') is duration", true),
        Row("/databases/x/documents/a/b is path", true), Row("latlng.value(1, 2) is latlng", true),
        Row("'a'.toUtf8() is bytes", true), Row("[1].toSet() is set", true),
    ]

    /// Errors are values: they deny unless && or || decides without them (Firebase's table:
    /// error && false is false, error || true is true, error || false and error && true are errors).
    static let errors: [Row] = [
        Row("false && 1 / 0 == 1", false), Row("true || 1 / 0 == 1", true),
        Row("1 / 0 == 1 || true", true), Row("1 / 0 == 1 && false", false),
        Row("1 / 0 == 1 || false", false), Row("false || 1 / 0 == 1", false), Row("1 / 0 == 1 && true", false),
        Row("!(1 / 0 == 1)", false), Row("(1 / 0 == 1) == false", false),
        Row("resource.data.missing == 1", false), Row("resource.data.missing == 1 || resource.data.count == 3", true),
        Row("1 % 0 == 0", false), Row("'a' - 'b' == ''", false), Row("1", false), Row("'true'", false), Row("null", false),
        Row("[1, 2][5] == 1", false), Row("[1, 2][-1] == 2", false), Row("resource.data.title.nope == 1", false),
        Row("9223372036854775807 + 1 > 0", false), Row("-9223372036854775808 < 0", true),
        Row("-9223372036854775808 - 1 < 0", false), Row("-9223372036854775808 / -1 > 0", false),
        Row("9223372036854775807 * 2 > 0", false), Row("-(-9223372036854775808) > 0", false),
        Row("math.abs(-9223372036854775808) > 0", false), Row("int(1e300) > 0", false),
    ]

    static let document: [Row] = [
        Row("resource.data.title == 'Hello'", true), Row("resource.data['count'] == 3", true),
        Row("resource.data.nested.x == 1", true), Row("resource.data.tags[1] == 'b'", true),
        Row("resource.id == id && id == 't1'", true),
        Row("resource.__name__ == /databases/$(database)/documents/things/$(id)", true),
        Row("resource['__name__'] == /databases/(default)/documents/things/t1", true),
        Row("resource.data.ref == /databases/(default)/documents/members/alice", true),
        Row("resource.data.when < request.time", true), Row("resource.data.place.latitude() == 37.5", true),
        Row("resource.data.blob.size() == 3", true),
        Row("request.path == /databases/$(database)/documents/things/t1", true),
        Row("request.method == 'get'", true), Row("request.resource == null", false), Row("request.query == null", false), Row("database == '(default)'", true),
        Row("request.auth.uid == 'alice'", true), Row("request.auth.uid == resource.data.owner", true),
        Row("request.auth.token.email == 'alice@example.com' && request.auth.token.email_verified", true),
        Row("request.auth.token.firebase.sign_in_provider == 'google.com'", true),
        Row("request.auth.token.admin == true", false),
        Row("request.time == timestamp.value(1700000000000)", true),
    ]

    static let methods: [Row] = [
        // maps
        Row("resource.data.keys().hasAll(['title', 'count'])", true), Row("resource.data.size() == 9", true),
        Row("resource.data.get('nope', 5) == 5", true), Row("resource.data.get('count', 5) == 3", true),
        Row("resource.data.get(['nested', 'x'], 0) == 1", true), Row("resource.data.get(['nested', 'y'], 0) == 0", true),
        Row("resource.data.values().size() == 9", true), Row("'title' in resource.data", true),
        Row("{'a': 1}.keys() == ['a']", true), Row("{'a': 1, 'b': 2}.values() == [1, 2]", true),
        // map diffs: left.diff(right) — added keys are in left only
        Row("{'a': 1, 'b': 2}.diff({'a': 1, 'b': 3, 'c': 4}).affectedKeys() == ['b', 'c'].toSet()", true),
        Row("{'a': 1, 'n': 0}.diff({'a': 1, 'r': 0}).addedKeys() == ['n'].toSet()", true),
        Row("{'a': 1, 'n': 0}.diff({'a': 1, 'r': 0}).removedKeys() == ['r'].toSet()", true),
        Row("{'a': 1, 'b': 2}.diff({'a': 1, 'b': 3}).changedKeys() == ['b'].toSet()", true),
        Row("{'a': 1, 'b': 2}.diff({'a': 1.0, 'b': 3}).unchangedKeys() == ['a'].toSet()", true),
        Row("{'a': 1}.diff({'a': 1}).affectedKeys().size() == 0", true),
        Row("{'a': 1}.diff(1).affectedKeys().size() == 0", false),
        // lists and sets
        Row("[1, 2, 3].hasAny([3, 4])", true), Row("[1, 2, 3].hasAny([4, 5])", false),
        Row("[1, 2].hasAll([1, 2, 3])", false), Row("[1, 2, 3].hasAll([1, 2])", true),
        Row("[1, 2].hasOnly([1, 2, 3])", true), Row("[1, 4].hasOnly([1, 2, 3])", false), Row("[].hasOnly([])", true),
        Row("[1, 1, 2].toSet().size() == 2", true), Row("[1, 1.0].toSet().size() == 1", true),
        Row("['a', 'b'].join('-') == 'a-b'", true), Row("[1, true, 2.5, null].join('-') == '1-true-2.5-null'", true), Row("[[1]].join('-') == '[1]'", false),
        Row("[1].concat([2]) == [1, 2]", true), Row("[1, 2, 3, 2].removeAll([2]) == [1, 3]", true), Row("[1, 2].size() == 2", true),
        Row("[1, 2].toSet().union([2, 3].toSet()).size() == 3", true),
        Row("[1, 2].toSet().intersection([2, 3].toSet()) == [2].toSet()", true),
        Row("[1, 2].toSet().difference([2, 3].toSet()) == [1].toSet()", true),
        Row("[1, 2].toSet() == [2, 1].toSet()", true), Row("2 in [1, 2].toSet()", true),
        Row("[1, 2].toSet().hasAll([1])", true),
        // strings
        Row("'hello'.size() == 5", true), Row("'héllo'.size() == 5", true), Row("'abc'.matches('a.c')", true),
        Row("'abcd'.matches('a.c')", false), Row("'a1b2'.matches('([a-z][0-9])+')", true),
        Row("'user@example.com'.matches('.*@example[.]com')", true), Row("'x@evil.com'.matches('.*@example[.]com')", false),
        Row("'2024-01-31'.matches('\\\\d{4}-\\\\d{2}-\\\\d{2}')", true), Row("'ab'.matches('a|ab')", true),
        Row("'x'.matches('[')", false), Row("'X'.matches('(?i)x')", true),
        Row("'Hi'.lower() == 'hi'", true), Row("'hi'.upper() == 'HI'", true), Row("'  x '.trim() == 'x'", true),
        Row("'a,b,,c'.split(',') == ['a', 'b', '', 'c']", true), Row("'a1b22c'.split('[0-9]+') == ['a', 'b', 'c']", true),
        Row("'aaa'.replace('a', 'b') == 'bbb'", true), Row("'a.b.c'.replace('[.]', '/') == 'a/b/c'", true),
        Row("'abc'.toUtf8().size() == 3", true),
        // timestamps and durations
        Row("request.time > timestamp.date(2020, 1, 1)", true), Row("timestamp.date(2024, 2, 29).day() == 29", true),
        Row("timestamp.date(2024, 3, 1).month() == 3 && timestamp.date(2024, 3, 1).year() == 2024", true),
        Row("timestamp.date(2023, 2, 29) == null", false), Row("timestamp.date(1970, 1, 1).dayOfWeek() == 4", true),
        Row("timestamp.date(2024, 12, 31).dayOfYear() == 366", true),
        Row("request.time - duration.value(1, 'h') < request.time", true),
        Row("request.time + duration.value(1, 'd') > request.time", true),
        Row("duration.value(90, 'm') == duration.time(1, 30, 0, 0)", true),
        Row("timestamp.date(2024, 1, 2) - timestamp.date(2024, 1, 1) == duration.value(1, 'd')", true),
        Row("timestamp.value(1500).toMillis() == 1500", true), Row("request.time.toMillis() == 1700000000000", true),
        Row("request.time.hours() == 22 && request.time.minutes() == 13 && request.time.seconds() == 20", true),
        Row("request.time.date() == timestamp.date(2023, 11, 14)", true),
        Row("duration.value(1, 'x') == null", false), Row("duration.value(9223372036854775807, 'w') == null", false),
        // conversions and math
        Row("int('42') == 42", true), Row("int(3.9) == 3", true), Row("int('x') == 0", false), Row("float(1) == 1.0", true),
        Row("float('2.5') == 2.5", true), Row("string(12) == '12'", true), Row("string(true) == 'true'", true),
        Row("bool('true')", true), Row("path('/databases/d/documents/a/b') == /databases/d/documents/a/b", true),
        Row("math.abs(-3) == 3", true), Row("math.abs(-2.5) == 2.5", true), Row("math.floor(2.7) == 2", true),
        Row("math.ceil(2.1) == 3", true), Row("math.round(2.5) == 3", true), Row("math.sqrt(16) == 4.0", true),
        Row("math.pow(2, 10) == 1024", true), Row("math.isNaN(0.0 / 0.0)", true), Row("math.isInfinite(1.0 / 0.0)", true),
        Row("latlng.value(0, 0).distance(latlng.value(0, 1)) > 111000", true),
    ]

    /// Rows whose answers come from Google's Firestore emulator (Cloud SDK), each expression
    /// evaluated there and in Hearth side by side (a deny here is false or an error there alike).
    static let asTheEmulatorAnswers: [Row] = [
        // `==` compares two numbers by value across int and float, but lists and maps compare
        // their elements typed; sets and map diffs compare numbers by value at any depth.
        Row("1 == 1.0", true), Row("!([1] == [1.0])", true), Row("!([[1]] == [[1.0]])", true), Row("{'a': 1} != {'a': 1.0}", true),
        Row("{'a': {'b': 1}} == {'a': {'b': 1.0}}", false), Row("{'a': 1}.values() == [1.0]", false),
        Row("!(1 in [1.0])", true), Row("!(1.0 in [1])", true), Row("[1] in [[1.0]]", false), Row("0.0 in [-0.0]", true),
        Row("!([1.0].hasAny([1]))", true), Row("!([1.0].hasAll([1]))", true), Row("!([1.0].hasOnly([1]))", true),
        Row("!([[1]].hasAny([[1.0]]))", true), Row("[1.0].removeAll([1]).size() == 1", true),
        Row("1 in [1.0].toSet()", true), Row("[1, 1.0].toSet().size() == 1", true), Row("[[1]].toSet() == [[1.0]].toSet()", true),
        Row("[1.0].toSet() in [[1].toSet()]", true), Row("[[1].toSet()].hasAny([[1.0].toSet()])", true),
        Row("[1].toSet().hasOnly([1.0])", true), Row("[1].toSet().hasAll([1.0].toSet())", true),
        Row("[1.0].toSet().union([1].toSet()).size() == 1", true), Row("[1.0].toSet().difference([1].toSet()).size() == 0", true),
        Row("{'a': 1}.diff({'a': 1.0}).affectedKeys().size() == 0", true),
        Row("{'a': [1]}.diff({'a': [1.0]}).changedKeys().size() == 0", true),
        Row("resource.data.count == 3.0", true), Row("resource.data.count in [3]", true), Row("resource.data.count in [3.0]", false),
        // A list's hasAll, hasAny, hasOnly and removeAll take a list; a set's union,
        // intersection and difference take a set; a set's hasAll, hasAny and hasOnly take either.
        Row("[1.0].hasAny([1.0].toSet())", false), Row("[1].removeAll([1].toSet()).size() == 0", false),
        Row("[1, 2].toSet().union([3]).size() == 3", false), Row("[1.0].toSet().difference([1.0]).size() == 0", false),
        Row("[1].toSet().hasAll([1])", true), Row("[1].toSet().hasAny([1.0].toSet())", true),
        // math.round rounds half up.
        Row("math.round(2.5) == 3", true), Row("math.round(-2.5) == -2", true), Row("math.round(-0.5) == 0", true),
        Row("math.round(-3.5) == -3", true), Row("math.round(0.49999999999999994) == 0", true), Row("math.round(2.4999999) == 2", true),
        // Slices of lists, strings and paths: a written end must leave a non-empty slice inside.
        Row("[1, 2, 3][0:2] == [1, 2]", true), Row("[1, 2, 3][1:] == [2, 3]", true), Row("[1, 2, 3][:1] == [1]", true),
        Row("[1, 2, 3][:] == [1, 2, 3]", true), Row("[][:].size() == 0", true), Row("''[:] == ''", true),
        Row("[1, 2, 3][1:2][0] == 2", true), Row("[1, 2, 3][-1:] == [3]", false), Row("[1, 2, 3][2:1] == []", false),
        Row("[1, 2, 3][0:10] == [1, 2, 3]", false), Row("[1, 2, 3][3:].size() == 0", false), Row("[1, 2, 3][:0].size() == 0", false),
        Row("[][0:].size() == 0", false), Row("[1, 2, 3][0:1.0] == [1]", false),
        // Bounds at the ends of the integers are errors, not traps.
        Row("[1][0:9223372036854775807] == [1]", false), Row("'a'[-9223372036854775808:] == 'a'", false),
        Row("'a'[9223372036854775807] == 'a'", false), Row("[1]['x':] == [1]", false),
        Row("'abc'[0:2] == 'ab'", true), Row("'abc'[1:] == 'bc'", true), Row("'abc'[0:5] == 'abc'", false),
        Row("'abc'[1] == 'b'", true), Row("'abc'[3] == ''", false), Row("'abc'[-1] == 'c'", false),
        Row("path('/a/b/c')[0:2] == path('/a/b')", true), Row("path('/a/b/c')[1] == 'b'", true),
        // Strings count UTF-16 code units.
        Row("'😀a'.size() == 3", true), Row("'😀a'[2] == 'a'", true), Row("'😀a'[0:2] == '😀'", true),
        Row("'€'.size() == 1", true), Row("'e\\u0301'.size() == 2", true),
        // Half a surrogate pair: no trap (Swift has no lone surrogates: each half reads as U+FFFD).
        Row("'😀'[1].size() == 1", true), Row("'😀'[1:2].size() == 1", true), Row("'a😀'[0:2].size() == 2", true),
        // NaN equals nothing, in lists and maps too, but is one element of a set.
        Row("float('NaN') != float('NaN')", true), Row("[float('NaN')] != [float('NaN')]", true),
        Row("!(float('NaN') in [float('NaN')])", true), Row("[float('NaN'), float('NaN')].toSet().size() == 1", true),
        Row("{'a': float('NaN')} != {'a': float('NaN')}", true), Row("math.sqrt(-1) != math.sqrt(-1)", true),
        // join() writes numbers, bools, null and paths as string() does.
        Row("[1, 2.5, true].join(',') == '1,2.5,true'", true), Row("[path('/a/b')].join(',') == '/a/b'", true),
        // A path literal's segment may hold dots.
        Row("/databases/x/documents/a/b.c[4] == 'b.c'", true),
        Row("/databases/$(database)/documents/a/b.c == path('/databases/' + database + '/documents/a/b.c')", true),
        // Regular expressions: RE2's flags, leftmost-first matches, groups in replacements.
        Row("'ABC'.matches('(?i)abc')", true), Row("'A\\nB'.matches('(?s)A.B')", true), Row("'ab'.matches('(?i:A)b')", true),
        Row("'K'.matches('(?i)\\u212a')", true), Row("'ß'.matches('(?i)SS')", false), Row("'x'.matches('(?i)(?-i)X')", false),
        Row("'aa'.replace('a|aa', 'X') == 'XX'", true), Row("'ab'.split('a|ab') == ['', 'b']", true),
        Row("'x1y22'.split('\\\\d+') == ['x', 'y']", true), Row("',a,,b,,'.split(',') == ['', 'a', '', 'b']", true),
        Row("',,'.split(',') == ['']", true), Row("''.split(',') == ['']", true), Row("'abc'.split('') == ['', 'a', 'b', 'c']", true),
        Row("'abc'.replace('', '-') == '-a-b-c-'", true),
        Row("'x'.replace('(x)', '[$1]') == '[x]'", true), Row("'xy'.replace('(x)(y)', '$2$1') == 'yx'", true),
        Row("'x'.replace('x', '\\\\$') == '$'", true), Row("'x'.replace('x', '$1') == 'x'", false),
        Row("'abc'.replace('z', '$1') == 'abc'", true),
        // Types.
        Row("{'a': 1}.diff({}) is map_diff", true), Row("!({'a': 1} is map_diff)", true), Row("[1.0] is vector", false),
        Row("{'a': 1} is map", true),
    ]

    @Test("answers as Google's Firestore emulator gives them", arguments: asTheEmulatorAnswers)
    func emulatorRows(_ row: Row) throws {
        let decision = try ExpressionTests.decide(row.expression)
        #expect(decision.isAllowed == row.allowed, "\(decision)")
    }

    @Test("maps whose keys are canonically equivalent but not the same bytes are different values: toSet() and union() keep each, and do not trap")
    func canonicallyEquivalentKeys() throws {
        // Five spellings of ệ; with a second letter, 25 maps each equal to the others in Swift's
        // String comparison, none equal in Firestore's (keys are bytes). A Set whose equality and
        // hashing disagreed trapped as it grew.
        let spellings = ["\u{1EC7}", "\u{1EB9}\u{302}", "\u{EA}\u{323}", "e\u{323}\u{302}", "e\u{302}\u{323}"]
        var maps: [Value] = []
        for first in spellings { for second in spellings { maps.append(.map([first + second: .null])) } }
        for _ in 0..<4 { maps += maps }  // 400 maps, 25 distinct
        let existing: [String: Value] = ["maps": .array(maps), "one": .array([.map(["\u{E9}": 1]), .map(["e\u{301}": 1])])]
        #expect(try Self.decide("resource.data.maps.toSet().size() == 25", existing: existing).isAllowed)
        #expect(try Self.decide("resource.data.maps.toSet().union(resource.data.maps.toSet()).size() == 25", existing: existing).isAllowed)
        #expect(try Self.decide("resource.data.one[0] != resource.data.one[1]", existing: existing).isAllowed)
        #expect(try Self.decide("resource.data.one.toSet().size() == 2", existing: existing).isAllowed)
        #expect(try Self.decide("resource.data.one[0] in [resource.data.one[1]].toSet()", existing: existing).isAllowed == false)
        // Lookups by key are by bytes too (as Google's emulator answers).
        #expect(try Self.decide("'\\u00e9' in resource.data.one[1]", existing: existing).isAllowed == false)
        #expect(try Self.decide("'e\\u0301' in resource.data.one[1]", existing: existing).isAllowed)
        #expect(try Self.decide("resource.data.one[1].get('\\u00e9', 7) == 7", existing: existing).isAllowed)
        #expect(try Self.decide("resource.data.one[1]['\\u00e9'] == 1", existing: existing).isAllowed == false)
        #expect(try Self.decide("resource.data.one[0].diff(resource.data.one[1]).addedKeys().size() == 1", existing: existing).isAllowed)
    }

    @Test("a vector is a type of its own: is vector, size(), toList(), equality")
    func vectors() throws {
        var stored = ExpressionTests.stored
        stored["v"] = .vector([1, 2.5])
        stored["w"] = .vector([.nan])
        for (expression, allowed) in [
            ("resource.data.v is vector", true), ("resource.data.v is map", false), ("resource.data.v is list", false),
            ("resource.data.v.size() == 2", true), ("resource.data.v.toList() == [1.0, 2.5]", true),
            ("resource.data.v == resource.data.v", true), ("resource.data.v.value == [1.0, 2.5]", false),
            ("resource.data.v.toList()[1] == 2.5", true), ("resource.data.v.size(1) == 2", false),
            // NaN components compare as NaN floats do: unequal, but one as set elements.
            ("resource.data.w == resource.data.w", false), ("[resource.data.w, resource.data.w].toSet().size() == 1", true),
            ("resource.data.v != resource.data.w", true),
        ] {
            let decision = try ExpressionTests.decide(expression, existing: stored)
            #expect(decision.isAllowed == allowed, "\(expression): \(decision)")
        }
    }

    @Test("operators and literals", arguments: operators)
    func operatorRows(_ row: Row) throws {
        let decision = try ExpressionTests.decide(row.expression)
        #expect(decision.isAllowed == row.allowed, "\(decision)")
    }

    @Test("evaluation errors deny unless && or || decide without them", arguments: errors)
    func errorRows(_ row: Row) throws {
        let decision = try ExpressionTests.decide(row.expression)
        #expect(decision.isAllowed == row.allowed, "\(decision)")
    }

    @Test("request, resource and wildcards", arguments: document)
    func documentRows(_ row: Row) throws {
        let decision = try ExpressionTests.decide(row.expression)
        #expect(decision.isAllowed == row.allowed, "\(decision)")
    }

    @Test("methods and functions", arguments: methods)
    func methodRows(_ row: Row) throws {
        let decision = try ExpressionTests.decide(row.expression)
        #expect(decision.isAllowed == row.allowed, "\(decision)")
    }

    @Test("an evaluation error is reported with its line and column")
    func errorLocation() throws {
        let decision = try ExpressionTests.decide("request.auth.uid == 'alice'", auth: nil)
        let denial = try #require(decision.denial)
        guard case .conditionsFailed(let attempts) = denial.reason, let attempt = attempts.first else {
            Issue.record("unexpected \(denial)")
            return
        }
        #expect(attempt.allow == SourceLocation(fileName: "test.rules", line: 5, column: 7))
        #expect(attempt.outcome == .error("cannot read 'uid' of null", at: SourceLocation(fileName: "test.rules", line: 5, column: 21)))
        #expect(decision.description == "denied get on things/t1: allow at test.rules:5:7: error at test.rules:5:21: cannot read 'uid' of null")
    }

    @Test("a missing document is null: resource.data on it is an error, resource == null holds")
    func missingDocument() throws {
        #expect(try ExpressionTests.decide("resource == null", existing: nil).isAllowed)
        #expect(!(try ExpressionTests.decide("resource.data.owner == 'alice'", existing: nil).isAllowed))
        #expect(try ExpressionTests.decide("resource == null || resource.data.owner == 'bob'", existing: nil).isAllowed)
    }
}
