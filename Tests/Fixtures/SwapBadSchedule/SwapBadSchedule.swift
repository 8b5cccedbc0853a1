import HearthFunctions

/// A bad version of the unit "Swap": a schedule that cannot be read.
public enum SwapBadSchedule: FunctionModule {
    public static let name = "Swap"

    public static func register(_ fn: inout FunctionRegistry) {
        fn.onCall("swapVersion") { (_: CallableRequest<Value>) in "bad schedule" }
        fn.onSchedule("swapBadTick", "every 61 minutes or so") { (_: ScheduledEvent) in }
    }
}
