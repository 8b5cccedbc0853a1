import Foundation
@testable import HearthRuntime
import HearthTesting
import Testing

/// A directory of its own under the temporary directory, removed when the test ends.
private final class TestDirectory {
    let path = NSTemporaryDirectory() + "hearth-pins-" + UUID().uuidString
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Copies of unit builds: held while a process runs them, removed once nothing does.
@Suite("Build copies of units")
struct BuildPinsTests {
    @Test("prune removes the copies nobody holds and no deploy recorded; held, recorded, kept and deploy-only copies stay; nothing while a deploy runs")
    func prune() throws {
        let dir = TestDirectory()
        let unit = dir.path + "/units/Swap"
        func copy(_ version: String, lock: Bool) throws {
            try FileManager.default.createDirectory(atPath: unit + "/" + version, withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: unit + "/" + version + "/libSwap.so", contents: Data([1])))
            if lock { #expect(FileManager.default.createFile(atPath: unit + "/" + version + "/" + BuildPins.lockName, contents: Data())) }
        }
        let (stale, held, recorded, current, deployed) = ("aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb", "cccccccccccccccc", "dddddddddddddddd", "eeeeeeeeeeeeeeee")
        for version in [stale, held, recorded, current] { try copy(version, lock: true) }
        try copy(deployed, lock: false)
        // Another runtime runs `held` (its own open file description: flock tells them apart).
        let other = BuildPins()
        #expect(other.hold(unit + "/" + held))

        // A deploy of the unit under way: nothing is touched.
        let deploy = open(unit + "/deploy.lock", O_RDONLY | O_CREAT, 0o644)
        #expect(flock(deploy, LOCK_EX) == 0)
        #expect(BuildPins.prune(unitDirectory: unit, keep: current, recorded: { [recorded] }) == 0)
        close(deploy)

        #expect(BuildPins.prune(unitDirectory: unit, keep: current, recorded: { [recorded] }) == 1)
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: unit).filter { $0.count == 16 })
        #expect(left == [held, recorded, current, deployed])
        other.releaseAll()
        #expect(BuildPins.prune(unitDirectory: unit, keep: current, recorded: { [recorded] }) == 1, "once released, held goes too")
    }

    @Test("a copy held again after its directory was removed gets a new lock, which a prune respects; unreadable deploy records prune nothing")
    func holdAfterRemoval() throws {
        let dir = TestDirectory()
        let version = dir.path + "/units/Swap/aaaaaaaaaaaaaaaa"
        let pins = BuildPins()
        #expect(pins.hold(version))
        #expect(pins.hold(version), "held once per directory")
        pins.releaseAll()
        try FileManager.default.removeItem(atPath: version)
        #expect(pins.hold(version))
        #expect(FileManager.default.fileExists(atPath: version + "/" + BuildPins.lockName))
        #expect(BuildPins.prune(unitDirectory: dir.path + "/units/Swap", keep: "", recorded: { [] }) == 0, "held: not removed")
        pins.releaseAll()
        #expect(BuildPins.prune(unitDirectory: dir.path + "/units/Swap", keep: "", recorded: { nil }) == 0, "records unknown: nothing removed")
        #expect(BuildPins.prune(unitDirectory: dir.path + "/units/Swap", keep: "", recorded: { [] }) == 1)
    }
}
