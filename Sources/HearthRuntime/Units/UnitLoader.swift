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

    /// Sends one request to the unit and waits for its reply (or the error it answered with).
    func request<R: Boundary.Request>(_ request: R, invocation: UInt64) async -> Result<R.Reply, RemoteError> {
        await withCheckedContinuation { continuation in
            self.request(request, invocation: invocation) { continuation.resume(returning: $0) }
        }
    }

    /// Sends a request; `reply` gets the unit's answer (a frame that cannot be read becomes an
    /// error), on whichever thread the unit answers from.
    func request<R: Boundary.Request>(_ request: R, invocation: UInt64, reply: @escaping @Sendable (Result<R.Reply, RemoteError>) -> Void) {
        let frame = Boundary.frame(Boundary.Header(kind: .request, operation: R.operation, invocation: invocation), request)
        let box = Unmanaged.passRetained(HostReplyBox { bytes in reply(Boundary.reply(R.Reply.self, from: bytes)) })
        frame.withUnsafeBufferPointer { p in
            exports.pointee.handle(exports.pointee.context, p.baseAddress!, p.count, box.toOpaque(), hostReplyTrampoline)
        }
    }
}

final class HostReplyBox {
    let reply: @Sendable ([UInt8]) -> Void
    init(_ reply: @escaping @Sendable ([UInt8]) -> Void) { self.reply = reply }
}

let hostReplyTrampoline: hearth_reply_fn = { context, bytes, length in
    let box = Unmanaged<HostReplyBox>.fromOpaque(context!).takeRetainedValue()
    box.reply(bytes.map { Array(UnsafeBufferPointer(start: $0, count: length)) } ?? [])
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
        // The unit's own copy of the version function says what it was built against; a unit of
        // another version is refused before it is sent anything.
        let host = hearth_unit_abi_version()
        guard let versionSymbol = dlsym(handle, HEARTH_UNIT_VERSION_SYMBOL) else {
            throw refuse("the library is not a Hearth unit: it does not export \(HEARTH_UNIT_VERSION_SYMBOL) or \(HEARTH_UNIT_ENTRY_SYMBOL) (a unit is a module under functions/ built with HearthFunctions)")
        }
        let built = unsafeBitCast(versionSymbol, to: (@convention(c) () -> UInt32).self)()
        guard built == host else {
            throw refuse("the unit was built against boundary version \(built); this host speaks version \(host) (rebuild the unit with this SDK)")
        }
        guard let symbol = dlsym(handle, HEARTH_UNIT_ENTRY_SYMBOL) else {
            throw refuse("the library does not export \(HEARTH_UNIT_ENTRY_SYMBOL) (units get it from the HearthUnitEntry build plugin)")
        }
        let entry = unsafeBitCast(symbol, to: hearth_unit_entry_fn.self)
        let table = services.makeCTable(unit: unit)
        guard let exports = entry(table) else { throw refuse("the unit's entry point returned no exports") }
        guard exports.pointee.abi_version == host else {
            throw refuse("the unit's exports speak boundary version \(exports.pointee.abi_version); this host speaks version \(host)")
        }
        let probe = LoadedUnit(name: unit, path: path, manifest: FunctionManifest(unit: unit, abiVersion: 0, functions: []), exports: exports)
        let manifest: FunctionManifest
        switch await probe.request(Boundary.Describe(), invocation: 0) {
        case .success(let m): manifest = m
        case .failure(let error): throw refuse("invalid manifest: \(error.message)\(error.debug.map { " (\($0))" } ?? "")")
        }
        guard manifest.unit == unit else {
            throw refuse("the library declares unit '\(manifest.unit)', not '\(unit)'")
        }
        guard manifest.abiVersion == Int(host) else {
            throw refuse("manifest ABI version \(manifest.abiVersion), host speaks \(host)")
        }
        let problems = manifest.problems(validateSchedule: validateSchedule)
        guard problems.isEmpty else { throw refuse(problems.joined(separator: "; ")) }
        return LoadedUnit(name: unit, path: path, manifest: manifest, exports: exports)
    }
}
