/// A piece of an expression with its 1-based column (in characters).
struct Token: Sendable, Hashable {
    var text: String
    var column: Int

    /// Lowercased text, for case-insensitive keyword matching.
    var lowered: String { text.lowercased() }

    /// Splits on whitespace; with `separatingCommas`, each comma is also a
    /// token of its own (so "mon,wed" and "mon, wed" tokenize alike).
    static func split(_ text: String, separatingCommas: Bool = false) -> [Token] {
        var tokens: [Token] = []
        var current = ""
        var start = 0
        func flush() {
            if !current.isEmpty { tokens.append(Token(text: current, column: start)) }
            current = ""
        }
        for (index, character) in text.enumerated() {
            let column = index + 1
            if character.isWhitespace {
                flush()
            } else if separatingCommas && character == "," {
                flush()
                tokens.append(Token(text: ",", column: column))
            } else {
                if current.isEmpty { start = column }
                current.append(character)
            }
        }
        flush()
        return tokens
    }

    /// Splits this token at `separator`, keeping empty pieces and their columns.
    func pieces(separatedBy separator: Character) -> [Token] {
        var pieces: [Token] = []
        var current = ""
        var start = column
        for (offset, character) in text.enumerated() {
            if character == separator {
                pieces.append(Token(text: current, column: start))
                current = ""
                start = column + offset + 1
            } else {
                current.append(character)
            }
        }
        pieces.append(Token(text: current, column: start))
        return pieces
    }
}
