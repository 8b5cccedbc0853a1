import Foundation
import HearthModel
import HearthStore

/// Unit versions on a running host: `hearth deploy` records a version in the store, then asks
/// every running host (admin API, `POST units/{unit}:activate`) to activate it here.
extension Runtime {
    /// Deploy history in the runtime's database.
    public var deploys: any DeployStorage { store.engine.deploys }

    /// What an activation did.
    public struct Activation: Sendable {
        public var unit: String
        public var version: String
        public var previous: String?
        public var functions: [String]
        public var added: [String]
        public var removed: [String]
        public var seconds: Double

        public var value: Value {
            ["unit": .string(unit), "version": .string(version), "previous": previous.map { .string($0) } ?? .null,
             "functions": .array(functions.map { .string($0) }), "added": .array(added.map { .string($0) }),
             "removed": .array(removed.map { .string($0) }), "seconds": .double(seconds)]
        }
    }

    /// Loads a recorded version of `unit` beside the running one and swaps the function table to it:
    /// its workers start and describe it; its manifest is validated (boundary version, patterns,
    /// schedules, names unique across units); then new invocations go to it while those already
    /// running finish on the old version, whose workers drain and exit. Triggers follow
    /// (`DeliveryEngine.update`). A version that fails any of this is refused with the reason and
    /// the running one keeps serving. Activations run one at a time.
    public func activate(unit: String, version: String) async throws -> Activation {
        try await activations.run {
            let started = ContinuousClock.now
            guard let configured = config.units.first(where: { $0.name == unit }) else {
                throw HTTPSError(.notFound, "unit \(unit) is not one of this host's units (runtime.toml's units)")
            }
            guard let recorded = try deploys.version(unit: unit, version: version) else {
                throw HTTPSError(.notFound, "no version \(version) of unit \(unit) is recorded (`hearth deploy --list \(unit)`)")
            }
            let loader = UnitLoader(services: services, log: log, validateSchedule: Runtime.scheduleProblem)
            let candidate: LoadedUnit
            do {
                candidate = try await loader.load(unit: unit, path: recorded.path, version: version, placement: placement(of: configured))
            } catch let error as UnitLoadError {
                throw HTTPSError(.failedPrecondition, "version \(version) of unit \(unit) was refused: \(error.reason)")
            }
            let current = table
            let old = current.units.first { $0.name == unit }
            // The configured order, with the candidate in its unit's place.
            let order = config.units.map(\.name)
            var units = current.units.filter { $0.name != unit } + [candidate]
            units.sort { (order.firstIndex(of: $0.name) ?? Int.max) < (order.firstIndex(of: $1.name) ?? Int.max) }
            let (next, refused) = FunctionTable.build(units)
            guard refused.isEmpty else {
                candidate.transport.stop()
                throw HTTPSError(.failedPrecondition, "version \(version) of unit \(unit) was refused: "
                                 + refused.map { "\($0.unit): \($0.reason)" }.joined(separator: "; "))
            }
            // The engine first: if it cannot follow, nothing has changed and the new version stops.
            do { try await engine.update(table: next) } catch {
                candidate.transport.stop()
                try? await engine.update(table: current)
                throw HTTPSError(.internal, "activating \(unit) \(version) failed in the delivery engine: \(error)")
            }
            noteMissingSecrets(candidate)
            replaceTable(next, clearingErrorsOf: unit)
            // Requests that looked up the old version just before the swap still reach it (or, once
            // its workers are gone, the new one); it drains and stops.
            old?.transport.retire(successor: candidate.transport)
            let before = Set(old?.manifest.functions.map(\.name) ?? [])
            let after = candidate.manifest.functions.map(\.name)
            let activation = Activation(unit: unit, version: version, previous: old.map { $0.version ?? "build" }, functions: after,
                                        added: after.filter { !before.contains($0) }, removed: before.subtracting(after).sorted(),
                                        seconds: (ContinuousClock.now - started).secondsDouble)
            log.log(.notice, "unit activated", ["unit": .string(unit), "version": .string(version), "previous": .string(activation.previous ?? "none"),
                                                "added": .string(activation.added.joined(separator: ",")),
                                                "removed": .string(activation.removed.joined(separator: ",")),
                                                "isolation": .string(candidate.isolation.rawValue),
                                                "ms": .double((activation.seconds * 1e6).rounded() / 1e3)])
            return activation
        }
    }

    /// Loads a library in a throwaway worker and checks its manifest as activation would (for
    /// `hearth deploy` before anything is recorded); the worker exits afterwards. Names are
    /// checked against this runtime's other loaded units.
    public func validate(unit: String, library: String) async throws -> FunctionManifest {
        let loader = UnitLoader(services: services, log: log, validateSchedule: Runtime.scheduleProblem)
        // The unit's own limits, in one worker of its own whatever its isolation (a library that
        // traps while loading must not take this process down).
        var configured = config.units.first { $0.name == unit } ?? RuntimeConfig.Unit(name: unit)
        configured.isolation = .process
        configured.workers = 1
        let placement = placement(of: configured)
        let candidate: LoadedUnit
        do { candidate = try await loader.load(unit: unit, path: library, placement: placement) } catch {
            throw HTTPSError(.failedPrecondition, "unit \(unit) (\(library)) was refused: \(error.reason)")
        }
        defer { candidate.transport.stop() }
        let others = table.units.filter { $0.name != unit }
        let (_, refused) = FunctionTable.build(others + [candidate])
        guard refused.isEmpty else {
            throw HTTPSError(.failedPrecondition, "unit \(unit) (\(library)) was refused: " + refused.map(\.reason).joined(separator: "; "))
        }
        return candidate.manifest
    }
}
