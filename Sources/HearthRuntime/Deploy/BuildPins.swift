import Foundation
import Synchronization

/// The copies of unit libraries at their build version that this process's workers run
/// (`Runtime.pinnedBuild`), each held with a shared `flock` on `<version>/in-use.lock` for as long
/// as the runtime lives, and the pruning of the copies no process holds: every distinct build a
/// server starts with leaves one, and a developer rebuilds all day.
final class BuildPins: Sendable {
    static let lockName = "in-use.lock"
    private let held = Mutex<[String: Int32]>([:])  // version directory → descriptor

    deinit { releaseAll() }

    /// Holds `directory`'s in-use lock, making the directory if needed; false if it cannot (the
    /// copy is then used unpinned: a later prune may remove it).
    func hold(_ directory: String) -> Bool {
        if held.withLock({ $0[directory] != nil }) { return true }
        let path = directory + "/" + BuildPins.lockName
        for _ in 0..<8 {
            guard (try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)) != nil else { return false }
            let descriptor = open(path, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
            if descriptor < 0 && errno == ENOENT { continue }  // a prune removed the directory meanwhile
            guard descriptor >= 0 else { return false }
            var locked = flock(descriptor, LOCK_SH)
            while locked != 0 && errno == EINTR { locked = flock(descriptor, LOCK_SH) }
            // A prune may have removed the directory between the open and the lock: a lock on a
            // file no longer there protects nothing, so the lock is taken again on the new one.
            var mine = stat(), there = stat()
            if locked == 0, fstat(descriptor, &mine) == 0, stat(path, &there) == 0, mine.st_dev == there.st_dev, mine.st_ino == there.st_ino {
                let duplicate = held.withLock { h -> Bool in
                    if h[directory] != nil { return true }
                    h[directory] = descriptor
                    return false
                }
                if duplicate { close(descriptor) }  // held meanwhile by another call: one lock is enough
                return true
            }
            close(descriptor)
            if locked != 0 { return false }
        }
        return false
    }

    func releaseAll() {
        for descriptor in held.withLock({ d in defer { d = [:] }; return Array(d.values) }) { close(descriptor) }
    }

    /// Removes the build copies under `unitDirectory` that no process holds and no deploy recorded,
    /// except `keep`; returns how many. `recorded` (the versions deploys recorded; nil if they
    /// cannot be read, and nothing is removed) is read holding the unit's deploy lock, which a
    /// deploy holds from its copy to its record; nothing is touched while a deploy runs. A copy
    /// without an in-use lock (made by a deploy, or before copies were held) is left alone.
    @discardableResult
    static func prune(unitDirectory: String, keep: String, recorded: () -> Set<String>?) -> Int {
        let deployLock = open(unitDirectory + "/deploy.lock", O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard deployLock >= 0 else { return 0 }
        defer { close(deployLock) }
        guard flock(deployLock, LOCK_EX | LOCK_NB) == 0 else { return 0 }
        defer { flock(deployLock, LOCK_UN) }
        guard let recorded = recorded() else { return 0 }
        var removed = 0
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: unitDirectory)) ?? [] {
            guard entry != keep, !recorded.contains(entry), entry.utf8.count == 16, entry.utf8.allSatisfy(\.isHexDigit) else { continue }
            let directory = unitDirectory + "/" + entry
            let descriptor = open(directory + "/" + lockName, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard descriptor >= 0 else { continue }  // not a build copy
            defer { close(descriptor) }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { continue }  // a process runs it
            if (try? FileManager.default.removeItem(atPath: directory)) != nil { removed += 1 }
        }
        return removed
    }
}

private extension UInt8 {
    var isHexDigit: Bool { (48...57).contains(self) || (97...102).contains(self) }
}
