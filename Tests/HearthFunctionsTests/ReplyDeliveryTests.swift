#if canImport(Glibc)
import Glibc
#endif
@testable import HearthFunctions
import Testing

/// How a unit tells that it runs in a worker: `Boundary.workerProcessVariable` must name its parent
/// process exactly; any other value, however malformed, means "not a worker" (handlers then go
/// where any task goes), never a crash.
@Suite("Reply delivery: is this process a worker")
struct ReplyDeliveryTests {
    @Test("the variable naming the parent process makes a worker")
    func namesParent() {
        #expect(ReplyDelivery.isWorker(variable: "4242", parent: 4242))
    }

    @Test("anything else is not a worker", arguments: [
        nil, "", " 4242", "4242 ", "+4242", "04242x", "4242.0", "0x1092", "-4242", "0", "4243",
        "99999999999999999999999", "2147483648", "-2147483649", "４２４２", String(repeating: "9", count: 100_000),
    ] as [String?])
    func notAWorker(variable: String?) {
        #expect(!ReplyDelivery.isWorker(variable: variable, parent: 4242))
    }

    @Test("in the test process, which no host started, the SDK does not take itself for a worker")
    func testProcess() {
        #expect(!ReplyDelivery.inWorker)
        #expect(ReplyDelivery.handlerExecutor == nil)
    }
}
