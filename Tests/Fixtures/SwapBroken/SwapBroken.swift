import HearthFunctions

/// A bad version of the unit "Swap": a function registered twice.
public enum SwapBroken: FunctionModule {
    public static let name = "Swap"

    public static func register(_ fn: inout FunctionRegistry) {
        fn.onCall("swapVersion") { (_: CallableRequest<Value>) in "broken" }
        fn.onCall("swapVersion") { (_: CallableRequest<Value>) in "broken again" }
    }
}
