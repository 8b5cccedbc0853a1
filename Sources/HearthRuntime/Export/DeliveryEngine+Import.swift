import HearthModel
import HearthStore

extension DeliveryEngine {
    /// After an import: each schedule this engine tracks continues from the last firing now
    /// stored (an instant the import says was missed fires at once, as after downtime), and every
    /// lane looks at its queue again, where the imported deliveries wait.
    func takeImportedState() async throws {
        try readSchedules(now: clock.now())
        markAllDirty()
        work.notify(nil)
    }
}
