import HearthFunctions

/// A unit for the secrets tests: one function declares HEARTH_TEST_SECRET and reads it, another
/// does not declare it and tries anyway.
public enum SecretUnit: FunctionModule {
    public static let name = "SecretUnit"

    public static func register(_ fn: inout FunctionRegistry) {
        fn.onCall("readSecret", .init(secrets: ["HEARTH_TEST_SECRET"])) { (req: CallableRequest<Value>) -> Value in
            let value = try req.context.secrets.value("HEARTH_TEST_SECRET")
            return ["length": .int(Int64(value.count)), "matches": .bool(value == "s3cret-value"),
                    "other": req.context.secrets["HEARTH_OTHER_SECRET"].map { .string($0) } ?? .null]
        }

        fn.onCall("sneakSecret") { (req: CallableRequest<Value>) -> Value in
            _ = try req.context.secrets.value("HEARTH_TEST_SECRET")
            return "leaked"
        }
    }
}
