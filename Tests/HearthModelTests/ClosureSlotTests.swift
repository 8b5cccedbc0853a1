import HearthModel
import Testing

@Suite("ClosureSlot: a closure set later, read from any thread")
struct ClosureSlotTests {
    typealias Planner = @Sendable (_ function: String, _ n: Int, _ delivery: Int64?) -> Int?

    /// A closure's context, which a reabstraction thunk around it would replace.
    static func context(_ f: @escaping Planner) -> UInt { unsafeBitCast(f, to: (UInt, UInt).self).1 }

    @Test("it hands out the closure it was given, unwrapped, however often it is read")
    func sameClosureEveryRead() throws {
        let slot = ClosureSlot<Planner>()
        #expect(slot.value == nil)
        let offset = Int.random(in: 1...1000)  // captured, so the closure has a context of its own
        slot.set { _, n, _ in n + offset }
        let first = try #require(slot.value)
        for i in 0..<10_000 {
            let read = try #require(slot.value)
            #expect(ClosureSlotTests.context(read) == ClosureSlotTests.context(first), "read \(i)")
            if i % 1000 == 0 { #expect(read("f", i, nil) == i + offset) }
        }
        slot.set(nil)
        #expect(slot.value == nil)
    }

    @Test("reads and sets from many tasks at once see one of the closures set, whole")
    func concurrentReadsAndSets() async {
        let slot = ClosureSlot<@Sendable () -> Int>()
        slot.set { 0 }
        await withTaskGroup(of: Bool.self) { group in
            for t in 1...8 {
                group.addTask {
                    var ok = true
                    for _ in 0..<2_000 {
                        slot.set { t }
                        let v = slot.value?() ?? -1
                        ok = ok && (0...8).contains(v)
                    }
                    return ok
                }
            }
            for await ok in group { #expect(ok) }
        }
    }
}
