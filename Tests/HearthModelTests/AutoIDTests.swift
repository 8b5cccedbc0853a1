import HearthModel
import HearthTesting
import Testing

@Suite("Auto ids")
struct AutoIDTests {
    @Test("20 characters of [A-Za-z0-9]; a seeded generator gives the same ids again; ids do not repeat")
    func shape() {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        var seen: Set<String> = []
        let system = SystemRandom()
        for _ in 0..<2000 {
            let id = system.autoID()
            #expect(id.count == 20 && id.allSatisfy(allowed.contains))
            seen.insert(id)
        }
        #expect(seen.count == 2000)
        var a = SplitMix64(seed: 9), b = SplitMix64(seed: 9)
        #expect((0..<5).map { _ in AutoID.make(using: &a) } == (0..<5).map { _ in AutoID.make(using: &b) })
        let (x, y) = (SeededRandom(seed: 4), SeededRandom(seed: 4))
        #expect((0..<5).map { _ in x.autoID() } == (0..<5).map { _ in y.autoID() }, "a seeded source repeats its ids")
        #expect(SeededRandom(seed: 5).autoID() != SeededRandom(seed: 4).autoID())
    }

    @Test("every character is about equally likely (bytes 248-255 are skipped, not folded onto the first letters)")
    func uniform() {
        var counts: [Character: Int] = [:]
        var rng = SplitMix64(seed: 1)
        for _ in 0..<31_000 { for ch in AutoID.make(using: &rng) { counts[ch, default: 0] += 1 } }
        // 620,000 characters over 62: 10,000 each; a fold of 8 byte values onto 8 letters would add ~3%.
        #expect(counts.count == 62)
        #expect(counts.values.allSatisfy { (9_600...10_400).contains($0) }, "\(counts.values.min()!)...\(counts.values.max()!)")
    }
}
