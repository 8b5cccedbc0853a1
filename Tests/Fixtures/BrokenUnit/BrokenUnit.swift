import HearthFunctions

/// A unit for tests that registers one name twice: the host must refuse it and keep running.
public enum BrokenUnit: FunctionModule {
    public static let name = "BrokenUnit"

    public static func register(_ fn: inout FunctionRegistry) {
        fn.onCall("twice") { (req: CallableRequest<Value>) in req.data }
        fn.onCall("twice") { (req: CallableRequest<Value>) in req.data }
    }
}
