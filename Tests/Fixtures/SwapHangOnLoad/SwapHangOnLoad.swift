import Foundation
import HearthFunctions

/// A version of the unit "Swap" that never finishes registering (only ever loaded in a worker,
/// which the host must refuse and kill).
public enum SwapHangOnLoad: FunctionModule {
    public static let name = "Swap"

    public static func register(_ fn: inout FunctionRegistry) {
        while true { sleep(1) }
    }
}
