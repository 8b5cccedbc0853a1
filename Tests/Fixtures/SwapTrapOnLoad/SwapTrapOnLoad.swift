import HearthFunctions

/// A version of the unit "Swap" that traps while it registers: loading it kills its process
/// (only ever loaded in a worker).
public enum SwapTrapOnLoad: FunctionModule {
    public static let name = "Swap"

    public static func register(_ fn: inout FunctionRegistry) {
        let declared: [String] = []
        fn.onCall(declared[0]) { (_: CallableRequest<Value>) in "never" }
    }
}
