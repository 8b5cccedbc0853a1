import HearthModel
@testable import HearthRules
import Testing

/// Files Hearth refuses, each with the exact place and a message that says what is wrong.
@Suite("Rules files that do not load")
struct ParseErrorTests {
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var source: String
        var line: Int
        var column: Int
        var message: String
        var description: String { name }
    }

    static let cases: [Case] = [
        Case(name: "is null", source: rulesFile("    match /a/{b} {\n      allow read: if resource is null;\n    }"), line: 5, column: 34,
             message: "null is not a type: write '== null' to test for null"),
        Case(name: "an index with nothing in it", source: rulesFile("    match /a/{b} {\n      allow read: if [1][];\n    }"), line: 5, column: 26,
             message: "expected an expression, found ']'"),
        Case(name: "an unclosed slice", source: rulesFile("    match /a/{b} {\n      allow read: if [1][0:1;\n    }"), line: 5, column: 29,
             message: "expected ']' to close the slice, found ';'"),
        Case(name: "no rules_version", source: "service cloud.firestore {\n}\n", line: 1, column: 1,
             message: "expected rules_version = '2'; first"),
        Case(name: "rules_version 1", source: "rules_version = '1';\nservice cloud.firestore {}\n", line: 1, column: 17,
             message: "rules_version '1' is not supported"),
        Case(name: "another service", source: "rules_version = '2';\nservice firebase.storage {\n}\n", line: 2, column: 9,
             message: "service firebase.storage is not supported"),
        Case(name: "unknown method", source: rulesFile("    match /a/{b} {\n      allow reed: if true;\n    }"), line: 5, column: 13,
             message: "unknown method 'reed'"),
        Case(name: "missing semicolon", source: rulesFile("    match /a/{b} {\n      allow read: if true\n    }"), line: 6, column: 5,
             message: "expected ';' after the condition, found '}'"),
        Case(name: "bare ** in a path", source: rulesFile("    match /a/** {\n    }"), line: 4, column: 14,
             message: "'*' outside a wildcard"),
        Case(name: "two recursive wildcards", source: rulesFile("    match /{a=**}/b/{c=**} {\n    }"), line: 4, column: 21,
             message: "a second recursive wildcard {c=**}"),
        Case(name: "recursive wildcard under another", source: rulesFile("    match /{a=**} {\n      match /x/{b=**} {\n      }\n    }"),
             line: 5, column: 16, message: "a second recursive wildcard {b=**}"),
        Case(name: "wildcard with one star", source: rulesFile("    match /a/{b=*} {\n    }"), line: 4, column: 14,
             message: "invalid wildcard {b=*}"),
        Case(name: "unterminated string", source: rulesFile("    match /a/{b} {\n      allow read: if b == 'abc;\n    }"), line: 5, column: 27,
             message: "unterminated string"),
        Case(name: "unknown escape", source: rulesFile("    match /a/{b} {\n      allow read: if b == 'a\\qc';\n    }"), line: 5, column: 29,
             message: "unknown escape '\\q'"),
        Case(name: "unknown function", source: rulesFile("    match /a/{b} {\n      allow read: if isAdmin();\n    }"), line: 5, column: 22,
             message: "unknown function 'isAdmin'"),
        Case(name: "unknown name", source: rulesFile("    match /a/{b} {\n      allow read: if user == b;\n    }"), line: 5, column: 22,
             message: "unknown name 'user'"),
        Case(name: "wrong argument count", source: rulesFile("    function f(a) { return a; }\n    match /a/{b} {\n      allow read: if f(1, 2);\n    }"),
             line: 6, column: 22, message: "function 'f' takes 1 argument, not 2"),
        Case(name: "integer out of range", source: rulesFile("    match /a/{b} {\n      allow read: if 9223372036854775808 > 0;\n    }"),
             line: 5, column: 22, message: "integer literal 9223372036854775808 is out of range"),
        Case(name: "allow outside the documents match", source: "rules_version = '2';\nservice cloud.firestore {\n  allow read;\n}\n",
             line: 3, column: 3, message: "allow must be inside match /databases/{database}/documents"),
        Case(name: "missing closing brace", source: "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{d}/documents {\n    match /a/{b} {\n",
             line: 5, column: 1, message: "missing '}' to close the match block at line 4, column 11"),
        Case(name: "unknown type after is", source: rulesFile("    match /a/{b} {\n      allow read: if b is strin;\n    }"), line: 5, column: 27,
             message: "expected a type after 'is'"),
        Case(name: "unknown method name", source: rulesFile("    match /a/{b} {\n      allow read: if b.sizee() > 1;\n    }"), line: 5, column: 22,
             message: "unknown method '.sizee()'"),
        Case(name: "function without return", source: rulesFile("    function f() { let x = 1; }\n"), line: 4, column: 31,
             message: "expected 'return <expression>;'"),
        Case(name: "top-level match of another path", source: "rules_version = '2';\nservice cloud.firestore {\n  match /users/{u} {\n  }\n}\n",
             line: 3, column: 3, message: "the service's match must be /databases/{database}/documents"),
        Case(name: "unterminated comment", source: rulesFile("    /* never closed\n"), line: 4, column: 5, message: "unterminated comment"),
        Case(name: "if is missing", source: rulesFile("    match /a/{b} {\n      allow read: true;\n    }"), line: 5, column: 19,
             message: "expected 'if' after 'allow …:'"),
        Case(name: "text after the service", source: "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{d}/documents {}\n}\nextra\n",
             line: 5, column: 1, message: "unexpected 'extra' after the service's closing '}'"),
        Case(name: "namespace used as a value", source: rulesFile("    match /a/{b} {\n      allow read: if math == 1;\n    }"), line: 5, column: 22,
             message: "'math' is a namespace"),
    ]

    @Test("a malformed file is refused with file:line:column and a message", arguments: cases)
    func refused(_ c: Case) throws {
        let error = try #require(loadError(c.source), "\(c.name) loaded")
        #expect(error.location == SourceLocation(fileName: "test.rules", line: c.line, column: c.column), "\(error)")
        #expect(error.message.contains(c.message), "\(error)")
        #expect(error.description.hasPrefix("test.rules:\(c.line):\(c.column): "))
    }

    @Test("parentheses nested past 100 levels are refused, not recursed into")
    func deepParentheses() throws {
        let deep = String(repeating: "(", count: 5000) + "true" + String(repeating: ")", count: 5000)
        let error = try #require(loadError(rulesFile("    match /a/{b} {\n      allow read: if \(deep);\n    }")))
        #expect(error.message == "nesting deeper than 100 levels")
        #expect(error.location.line == 5)
    }

    @Test("unary operators, lists and match blocks nested past the bound are refused")
    func otherDeepNesting() throws {
        let nots = String(repeating: "!", count: 10_000) + "true"
        #expect(loadError(rulesFile("    match /a/{b} {\n      allow read: if \(nots);\n    }"))?.message == "nesting deeper than 100 levels")
        let lists = String(repeating: "[", count: 3000) + String(repeating: "]", count: 3000)
        #expect(loadError(rulesFile("    match /a/{b} {\n      allow read: if \(lists) == [];\n    }"))?.message == "nesting deeper than 100 levels")
        let blocks = String(repeating: "match /a/{b} {\n", count: 200) + String(repeating: "}\n", count: 200)
        #expect(loadError(rulesFile(blocks))?.message == "nesting deeper than 100 levels")
    }

    @Test("a long chain of operators is refused past the expression height bound")
    func longChains() throws {
        let sum = Array(repeating: "1", count: 500).joined(separator: " + ")
        let error = try #require(loadError(rulesFile("    match /a/{b} {\n      allow read: if \(sum) > 0;\n    }")))
        #expect(error.message.contains("expression nested deeper than 150 levels"))
        // && and || chains are flat: 1000 conjuncts load.
        let conjunction = Array(repeating: "true", count: 1000).joined(separator: " && ")
        #expect(loadError(rulesFile("    match /a/{b} {\n      allow read: if \(conjunction);\n    }")) == nil)
    }

    @Test("the whole supported syntax loads")
    func fullSyntax() throws {
        let source = """
            rules_version = '2';
            // A line comment.
            service cloud.firestore {
              /* service-level function */
              function signedIn() { return request.auth != null; }
              match /databases/{database}/documents {
                function owns(uid) {
                  let me = request.auth.uid;
                  return signedIn() && me == uid;
                }
                match /members/{uid}/{document=**} {
                  allow read, write: if owns(uid);
                }
                match /{path=**}/items/{item} {
                  allow list: if resource.data.owner == request.auth.uid && request.query.limit <= 50;
                }
                match /things/{id} {
                  allow get;
                  allow create: if request.resource.data.keys().hasOnly(['a', "b"])
                    && request.resource.data.a is string
                    && request.resource.data.get('b', 0) in [0, 1, 2.5]
                    && (request.time > timestamp.date(2020, 1, 1) ? true : false)
                    && {'k': [1, -2, null, true]}.size() == 1
                    && exists(/databases/$(database)/documents/members/$(request.auth.uid))
                    && get(/databases/(default)/documents/members/$(request.auth.uid)).data.role == 'x'
                    && 'a\\n\\t\\u00e9\\x41'.size() == 5 && 1.5e3 == 1500.0 && 10 % 3 == 1 && !false;
                  allow update, delete: if resource.data.diff(request.resource.data).affectedKeys().hasOnly(['n'])
                    && math.abs(-1) == 1 && duration.value(1, 'h') < duration.time(2, 0, 0, 0) && 'a'.matches('[a-z]+');
                }
              }
            }
            """
        let rules = try load(source)
        #expect(rules.matches.count == 3)
        #expect(rules.functions.map(\.name) == ["signedIn", "owns"])
    }
}
