/// The unit boundary, defined once for both sides: the operations (`Boundary.Operation`), one message
/// type per event kind and per host-service request and reply, and the frames that carry them.
///
/// Every message travels as one frame:
///
/// ```
/// u32 LE   length of what follows (header and body)
/// u8       kind: 1 request, 2 reply, 3 failure (the body is a RemoteError)
/// u16 LE   operation (Boundary.Operation's raw value)
/// u64 LE   invocation id (0 for describe)
/// u64 LE   call id: matches a reply to its request on a stream (0 in-process)
/// body     the message in its wire encoding (Wire.swift)
/// ```
///
/// Frames are self-delimiting and carry everything needed to route them, so the same bytes go
/// through the in-process C calls of `HearthUnitABI.h`, over a worker process's socket, and into
/// recordings; nothing in them depends on sharing an address space.
public enum Boundary {
    /// The boundary's schema version: `HEARTH_UNIT_ABI_VERSION`. Any change to a frame, an operation
    /// or a message's encoding changes it; the host refuses a unit built against another version,
    /// naming both.
    public static let version: UInt32 = 2

    /// In a worker process's environment (`hearth worker`), the id of the host process that
    /// started it. A unit whose parent process has that id runs in a worker, where every reply from
    /// the host arrives on the worker's one socket reader thread, and its handlers go on there (see
    /// `HandlerExecutor` in HearthFunctions); any other process (one the unit starts, say) queues
    /// resumed handlers on Swift's pool. Not part of the frames: a unit of either kind speaks to a
    /// host of either kind.
    public static let workerProcessVariable = "HEARTH_WORKER_PROCESS"

    /// Bytes of a frame header, the length field included.
    public static let headerSize = 23
    /// The largest frame either side accepts: far past any request (commits stop at 10 MiB, as
    /// Firestore's requests do) or reply (a query's results).
    public static let maxFrameBytes = 1 << 30

    public enum FrameKind: UInt8, Sendable {
        case request = 1
        case reply = 2
        case failure = 3
    }

    public struct Header: Sendable, Hashable {
        public var kind: FrameKind
        public var operation: Operation
        public var invocation: UInt64
        public var call: UInt64

        public init(kind: FrameKind, operation: Operation, invocation: UInt64, call: UInt64 = 0) {
            self.kind = kind
            self.operation = operation
            self.invocation = invocation
            self.call = call
        }

        /// The header of the reply (or failure) to this request.
        public func answer(_ kind: FrameKind) -> Header { Header(kind: kind, operation: operation, invocation: invocation, call: call) }
    }

    /// One frame: `header` then `message`'s encoding. Inlinable, as `body` is, so that each caller
    /// gets it specialized for its message type.
    /// The buffer starts at 256 bytes, a callable's invocation with a few headers: from 96 it grew
    /// (an allocation and a copy) for nearly every one. Small frames cost the same allocation.
    @inlinable public static func frame<M: WireEncodable>(_ header: Header, _ message: M) -> [UInt8] {
        var w = WireWriter(capacity: 256)
        let length = w.reserve(4)
        w.byte(header.kind.rawValue)
        let op = header.operation.rawValue
        w.byte(UInt8(truncatingIfNeeded: op))
        w.byte(UInt8(truncatingIfNeeded: op >> 8))
        w.fixed64(header.invocation)
        w.fixed64(header.call)
        message.encode(to: &w)
        // The length goes in before the bytes are handed over: changed after, the buffer the writer
        // still shared would be copied whole (an allocation and a copy for every frame).
        w.patchUInt32(UInt32(truncatingIfNeeded: w.bytes.count - 4), at: length)
        return w.finish()
    }

    /// A failure frame answering `request`.
    public static func failure(_ request: Header, _ error: RemoteError) -> [UInt8] { frame(request.answer(.failure), error) }

    /// Reads the header of the frame that fills `buffer` exactly; the body follows at `headerSize`.
    public static func header(_ buffer: UnsafeRawBufferPointer) throws(WireError) -> Header {
        guard buffer.count >= headerSize else {
            throw .malformed(offset: 0, message: "a frame is at least \(headerSize) bytes (got \(buffer.count))")
        }
        let length = Int(buffer.loadUnaligned(as: UInt32.self).littleEndian)
        guard length == buffer.count - 4 else {
            throw .malformed(offset: 0, message: "the frame says \(length) bytes follow its length, but \(buffer.count - 4) do")
        }
        return try readHeader(buffer)
    }

    /// Splits the first frame off a byte stream (a worker's socket): the frame's bytes, or nil when
    /// the stream does not hold a whole frame yet. A length beyond `maxFrameBytes` is an error.
    public static func splitFrame(_ stream: [UInt8]) throws(WireError) -> [UInt8]? {
        guard stream.count >= 4 else { return nil }
        let length = Int(UInt32(stream[0]) | UInt32(stream[1]) << 8 | UInt32(stream[2]) << 16 | UInt32(stream[3]) << 24)
        try checkLength(length)
        guard stream.count >= length + 4 else { return nil }
        return Array(stream[0..<(length + 4)])
    }

    /// Checks a frame's length field (the bytes after it): at least a header, at most `maximum`.
    public static func checkLength(_ length: Int, maximum: Int = maxFrameBytes) throws(WireError) {
        guard length + 4 >= headerSize, length <= maximum else {
            throw .malformed(offset: 0, message: "a frame length of \(length) bytes is out of range (at most \(maximum))")
        }
    }

    static func readHeader(_ buffer: UnsafeRawBufferPointer) throws(WireError) -> Header {
        guard let kind = FrameKind(rawValue: buffer[4]) else { throw .malformed(offset: 4, message: "unknown frame kind \(buffer[4])") }
        let raw = UInt16(buffer[5]) | UInt16(buffer[6]) << 8
        guard let operation = Operation(rawValue: raw) else {
            throw .malformed(offset: 5, message: "unknown operation \(raw) (this side speaks boundary version \(version))")
        }
        let invocation = buffer.loadUnaligned(fromByteOffset: 7, as: UInt64.self).littleEndian
        let call = buffer.loadUnaligned(fromByteOffset: 15, as: UInt64.self).littleEndian
        return Header(kind: kind, operation: operation, invocation: invocation, call: call)
    }

    /// Reads a whole frame: its header and its body as `M`.
    public static func read<M: WireDecodable>(_ type: M.Type, from buffer: UnsafeRawBufferPointer) throws(WireError) -> (Header, M) {
        let header = try header(buffer)
        return (header, try body(M.self, of: buffer))
    }

    /// The body of a frame (whose header was read) as `M`, which must fill it exactly. Inlinable,
    /// so that each caller gets it specialized for its `M`: unspecialized, the message was built
    /// and handed back through its value witnesses (copies of every field, about 8% of a worker's
    /// reader thread under the echo callable).
    @inlinable public static func body<M: WireDecodable>(_ type: M.Type, of buffer: UnsafeRawBufferPointer) throws(WireError) -> M {
        var r = WireReader(UnsafeRawBufferPointer(rebasing: buffer[headerSize...]))
        let message = try M(from: &r)
        try r.end()
        return message
    }

    /// Reads a reply frame to a request: its `Reply`, or the error a failure frame carries. A frame
    /// that cannot be read becomes an `internal` error naming the problem. Inlinable, so that each
    /// caller gets it specialized for its `R` (unspecialized, every reply looked up the generic
    /// metadata of its result types at run time: about 7 lookups per write+trigger item).
    @inlinable public static func reply<R: WireDecodable>(_ type: R.Type, from bytes: [UInt8]) -> Result<R, RemoteError> {
        bytes.withUnsafeBytes { p in
            do {
                let header = try header(p)
                switch header.kind {
                case .reply: return .success(try body(R.self, of: p))
                case .failure: return .failure(try body(RemoteError.self, of: p))
                case .request: throw WireError.malformed(offset: 4, message: "a request frame where a reply was expected")
                }
            } catch {
                return .failure((error as? WireError)?.remoteError ?? RemoteError(wrapping: error))
            }
        }
    }
}

extension RemoteError: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.string(code.rawValue)
        w.string(message)
        w.write(details)
        w.write(debug)
    }

    public init(from r: inout WireReader) throws(WireError) {
        let name = try r.string()
        self.init(code: FunctionsErrorCode(name: name) ?? .internal, message: try r.string(),
                  details: try r.optional(Value.self), debug: try r.optional(String.self))
    }
}

extension Boundary {
    /// Sets a frame's call id (a worker connection numbers the requests it sends).
    public static func setCall(_ call: UInt64, in frame: inout [UInt8]) {
        guard frame.count >= headerSize else { return }
        for k in 0..<8 { frame[15 + k] = UInt8(truncatingIfNeeded: call >> (8 * UInt64(k))) }
    }
}
