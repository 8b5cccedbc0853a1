import HearthModel
import Testing

@Suite("Push messages")
struct PushMessageTests {
    @Test("a message FCM would refuse is refused before it is sent, naming what is wrong")
    func checks() throws {
        try PushMessage(token: "t", title: "Due", body: "milk", data: ["itemId": "i"], badge: 2, sound: "default").check()
        let bad: [(PushMessage, String)] = [
            (PushMessage(token: ""), "token"),
            (PushMessage(token: String(repeating: "t", count: 5000)), "token"),
            (PushMessage(token: "t", badge: -1), "badge"),
            (PushMessage(token: "t", body: String(repeating: "b", count: 5000)), "4096"),
            (PushMessage(token: "t", data: ["google.x": "1"]), "reserved"),
            (PushMessage(token: "t", data: ["from": "1"]), "reserved"),
        ]
        for (message, words) in bad {
            do {
                try message.check()
                Issue.record("accepted \(message)")
            } catch {
                #expect(error.code == .invalidArgument)
                #expect(error.message.contains(words), "\(error.message)")
            }
        }
    }

    @Test("a frame whose badge does not fit an Int or whose data holds a non-string is malformed, not a trap")
    func hostileWire() throws {
        var w = WireWriter()
        w.string("t")
        w.write(Optional<String>.none)
        w.write(Optional<String>.none)
        w.write(Value.map(["k": .int(1)]))
        w.write(Optional<Int64>.none)
        w.write(Optional<String>.none)
        #expect(throws: WireError.self) { try PushMessage(wireBytes: w.finish()) }
    }
}
