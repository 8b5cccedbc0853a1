import HearthFunctions

/// A unit for tests that declares `echo`, which EchoUnit already declares (refused when loaded
/// after it), and an invalid trigger pattern under another configuration.
public enum ClashUnit: FunctionModule {
    public static let name = "ClashUnit"

    public static func register(_ fn: inout FunctionRegistry) {
        fn.onCall("echo") { (req: CallableRequest<Value>) in req.data }
        fn.onCall("clashOnly") { (_: CallableRequest<Value>) in "clash" }
    }
}
