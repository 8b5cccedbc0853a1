import Foundation
import HearthModel
import Testing

@Suite("ClosureSlot: a closure set later, read from any thread")
struct ClosureSlotTests {
    typealias Planner = @Sendable (_ function: String, _ n: Int, _ delivery: Int64?) -> Int?

    @Test("it hands out the closure it was given, however often it is read: calling it goes no deeper on the thousandth read than on the first")
    func sameClosureEveryRead() throws {
        let slot = ClosureSlot<Planner>()
        #expect(slot.value == nil)
        // The closure reports how deep the stack is where it runs: a closure handed out wrapped in
        // a new thunk on every read (as a bare `Mutex<F?>` does) runs one frame deeper each time.
        slot.set { _, n, _ in n == 0 ? Thread.callStackReturnAddresses.count : n + 1 }
        var depths: [Int] = []
        for i in 0..<1_000 {
            let read = try #require(slot.value)
            depths.append(read("f", 0, nil) ?? -1)
            if i % 100 == 0 { #expect(read("f", i + 1, nil) == i + 2) }
        }
        #expect(depths.first! < 100, "a stack deep enough to see growth in (backtraces stop at 128)")
        #expect(depths.allSatisfy { $0 == depths[0] }, "stack depths \(Set(depths).sorted())")
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
