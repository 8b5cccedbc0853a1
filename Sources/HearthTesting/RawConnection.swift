import Foundation
import Glibc

/// A plain TCP connection to the server on 127.0.0.1, written byte by byte by the test: for what an
/// HTTP client library would not do (stall mid-header, hold hundreds of keep-alive connections,
/// send oversized headers). Reads and writes time out, so a misbehaving server fails the test
/// instead of hanging it.
public final class RawConnection: @unchecked Sendable {  // used by one thread at a time
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(_ d: String) { description = d }
    }

    public struct Response: Sendable {
        public var status: Int
        public var headers: [String: String]  // lower-cased names
        public var body: [UInt8]
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    public let fd: Int32
    private var buffer: [UInt8] = []

    public init(port: Int, timeoutSeconds: Int = 90) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure("socket: errno \(errno)") }
        var tv = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            let e = errno
            Glibc.close(fd)
            throw Failure("connect: errno \(e)")
        }
    }

    deinit { Glibc.close(fd) }

    public func setReadTimeout(milliseconds: Int) {
        var tv = timeval(tv_sec: milliseconds / 1000, tv_usec: (milliseconds % 1000) * 1000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure("send: errno \(errno)") }
            offset += n
        }
    }

    /// Reads more bytes; false when the server closed the connection.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        var n: Int
        repeat {
            n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        } while n < 0 && errno == EINTR  // a signal (a debugger attaching, say) is not the server's doing
        if n == 0 { return false }
        guard n > 0 else { throw Failure(errno == EAGAIN ? "read timed out" : "recv: errno \(errno)") }
        buffer.append(contentsOf: chunk[0..<n])
        return true
    }

    /// True when the server closes the connection (reads return end of file) before the read timeout.
    public func waitForClose() throws -> Bool {
        while true {
            do {
                if try !fill() { return true }
            } catch let f as Failure where f.description.hasPrefix("recv: errno \(ECONNRESET)") {
                return true
            }
        }
    }

    /// Reads one response with a Content-Length body (what the server sends for non-streamed replies).
    public func readResponse() throws -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        var end: Int?
        while end == nil {
            end = buffer.indices.dropLast(3).first { buffer[$0..<$0 + 4].elementsEqual(separator) }
            if end == nil { guard try fill() else { throw Failure("connection closed before a complete response head") } }
        }
        let head = String(decoding: buffer[0..<end!], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = head[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure("bad status line: \(head[0])") }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        let bodyStart = end! + 4
        while buffer.count < bodyStart + length {
            guard try fill() else { throw Failure("connection closed in the body") }
        }
        let body = Array(buffer[bodyStart..<bodyStart + length])
        buffer.removeFirst(bodyStart + length)
        return Response(status: status, headers: headers, body: body)
    }
}

