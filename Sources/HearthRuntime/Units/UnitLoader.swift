#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HearthModel
import HearthUnitABI

/// A unit library loaded into this process, with its validated manifest.
public final class LoadedUnit: Sendable {
    public let name: String
    public let path: String
    public let manifest: FunctionManifest
    /// Valid for the life of the process: unit libraries are never unloaded (dlclose of a Swift
    /// library makes later casts crash), and the unit keeps its exports alive.
    nonisolated(unsafe) let exports: UnsafePointer<hearth_unit_exports>

    init(name: String, path: String, manifest: FunctionManifest, exports: UnsafePointer<hearth_unit_exports>) {
        self.name = name
        self.path = path
        self.manifest = manifest
        self.exports = exports
    }

    /// Sends one message to the unit and waits for its reply.
    func send(_ message: [String: Value]) async -> [String: Value] {
        await withCheckedContinuation { continuation in
            send(message) { continuation.resume(returning: $0) }
        }
    }

    /// Sends a message; `reply` gets the unit's answer (or a decoding failure as an error reply),
    /// on whichever thread the unit answers from.
    func send(_ message: [String: Value], reply: @escaping @Sendable ([String: Value]) -> Void) {
        let bytes = UnitProtocol.encode(message)
        let box = Unmanaged.passRetained(HostReplyBox(reply))
        bytes.withUnsafeBufferPointer { p in
            exports.pointee.handle(exports.pointee.context, p.baseAddress!, p.count, box.toOpaque(), hostReplyTrampoline)
        }
    }
}

final class HostReplyBox {
    let reply: @Sendable ([String: Value]) -> Void
    init(_ reply: @escaping @Sendable ([String: Value]) -> Void) { self.reply = reply }
}

let hostReplyTrampoline: hearth_reply_fn = { context, bytes, length in
    let box = Unmanaged<HostReplyBox>.fromOpaque(context!).takeRetainedValue()
    let message: [String: Value]
    do {
        message = try UnitProtocol.decode(UnsafeBufferPointer(start: bytes, count: bytes == nil ? 0 : length))
    } catch {
        message = ["error": RemoteError(wrapping: error).value]
    }
    box.reply(message)
}

/// Why a unit was refused: the unit, the library file and the reason.
public struct UnitLoadError: Error, Sendable, CustomStringConvertible, Equatable {
    public var unit: String
    public var path: String
    public var reason: String

    public var description: String { "unit \(unit) (\(path)): \(reason)" }
}

/// Loads unit libraries with dlopen and validates what they declare.
public struct UnitLoader: Sendable {
    let services: HostServices
    /// Checks a schedule expression and zone; returns the problem or nil.
    let validateSchedule: @Sendable (String, String) -> String?

    public init(services: HostServices, validateSchedule: @escaping @Sendable (String, String) -> String? = { _, _ in nil }) {
        self.services = services
        self.validateSchedule = validateSchedule
    }

    /// The library file a unit builds to: `lib<Name>.so` in `directory`.
    public static func libraryPath(unit: String, directory: String) -> String {
        (directory as NSString).appendingPathComponent("lib\(unit).so")
    }

    /// Loads `unit` from `path`, checks its ABI version and manifest, or says why not.
    public func load(unit: String, path: String) async throws(UnitLoadError) -> LoadedUnit {
        func refuse(_ reason: String) -> UnitLoadError { UnitLoadError(unit: unit, path: path, reason: reason) }
        guard FileManager.default.fileExists(atPath: path) else {
            throw refuse("library not found (build it with `swift build --product \(unit)`)")
        }
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            throw refuse("dlopen failed: \(String(cString: dlerror()))")
        }
        // Never dlclose: see LoadedUnit.exports.
        guard let symbol = dlsym(handle, HEARTH_UNIT_ENTRY_SYMBOL) else {
            throw refuse("the library does not export \(HEARTH_UNIT_ENTRY_SYMBOL); add the @_cdecl entry point that calls exportUnit")
        }
        let entry = unsafeBitCast(symbol, to: hearth_unit_entry_fn.self)
        let table = services.makeCTable(unit: unit)
        guard let exports = entry(table) else {
            throw refuse("the unit refused the host: ABI version mismatch (host speaks \(hearth_unit_abi_version()); rebuild the unit against this SDK)")
        }
        guard exports.pointee.abi_version == hearth_unit_abi_version() else {
            throw refuse("ABI version \(exports.pointee.abi_version), host speaks \(hearth_unit_abi_version())")
        }
        let probe = LoadedUnit(name: unit, path: path, manifest: FunctionManifest(unit: unit, abiVersion: 0, functions: []), exports: exports)
        let reply = await probe.send(["op": .string(UnitProtocol.describe)])
        let manifestValue: Value
        do { manifestValue = try UnitProtocol.unwrapReply(reply) } catch {
            throw refuse("invalid manifest: \(error.message)")
        }
        let manifest: FunctionManifest
        do { manifest = try ValueDecoder().decode(FunctionManifest.self, from: manifestValue) } catch {
            throw refuse("invalid manifest: \(describeDecodingError(error))")
        }
        guard manifest.unit == unit else {
            throw refuse("the library declares unit '\(manifest.unit)', not '\(unit)'")
        }
        guard manifest.abiVersion == Int(hearth_unit_abi_version()) else {
            throw refuse("manifest ABI version \(manifest.abiVersion), host speaks \(hearth_unit_abi_version())")
        }
        let problems = manifest.problems(validateSchedule: validateSchedule)
        guard problems.isEmpty else { throw refuse(problems.joined(separator: "; ")) }
        return LoadedUnit(name: unit, path: path, manifest: manifest, exports: exports)
    }
}
