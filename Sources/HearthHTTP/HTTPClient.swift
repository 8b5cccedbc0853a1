import CCurl
import Dispatch
import HearthModel
import Synchronization

/// An outgoing request.
public struct HTTPClientRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// The whole exchange, connection included.
    public var timeout: Duration
    /// A response body longer than this ends the transfer with a `.responseTooLarge` error.
    public var maxResponseBytes: Int

    public init(method: String = "GET", url: String, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [], timeout: Duration = .seconds(30),
                maxResponseBytes: Int = 64 << 20) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.maxResponseBytes = maxResponseBytes
    }
}

public struct HTTPClientResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// Why a request got no HTTP answer: unreachable, timed out, TLS refused… (an HTTP error status is
/// a response, not this).
public struct HTTPClientError: Error, Sendable, CustomStringConvertible, Equatable {
    public enum Kind: Sendable, Equatable { case timeout, connection, tls, invalidRequest, responseTooLarge, other }
    public var kind: Kind
    public var message: String
    public var description: String { message }
}

/// An HTTP client on libcurl's multi interface: one dedicated thread drives every transfer
/// (`curl_multi_poll`), so no request ever blocks a thread that Swift tasks need, and connections to
/// a host are kept alive and reused between requests through the multi handle's connection cache.
/// Easy handles are pooled and reused too. TLS certificates are verified.
public final class HTTPClient: Sendable {
    let loop: CurlLoop

    private static let globalInit: Void = { curl_global_init(Int(CURL_GLOBAL_ALL)) }()

    public init() {
        _ = HTTPClient.globalInit
        loop = CurlLoop()
    }

    deinit { loop.stop() }

    public func send(_ request: HTTPClientRequest) async throws(HTTPClientError) -> HTTPClientResponse {
        let result: Result<HTTPClientResponse, HTTPClientError> = await withCheckedContinuation { continuation in
            loop.submit(Transfer(request: request, continuation: continuation))
        }
        return try result.get()
    }

    /// Convenience: a request with a JSON body.
    public func postJSON(_ url: String, _ value: Value, headers: HTTPHeaders = HTTPHeaders(), timeout: Duration = .seconds(30)) async throws(HTTPClientError) -> HTTPClientResponse {
        var h = headers
        h.set("Content-Type", "application/json")
        return try await send(HTTPClientRequest(method: "POST", url: url, headers: h, body: JSONWriter.encode(value), timeout: timeout))
    }
}

/// One request in flight: what was asked, where the answer goes, and the buffers curl fills.
/// Owned by the loop thread once submitted.
final class Transfer: @unchecked Sendable {  // handed to the loop thread once, then only it touches it
    let request: HTTPClientRequest
    let continuation: CheckedContinuation<Result<HTTPClientResponse, HTTPClientError>, Never>
    let sink = ResponseSink()
    var body: [UInt8]
    var headerList: UnsafeMutablePointer<curl_slist>?
    var handle: UnsafeMutableRawPointer?

    init(request: HTTPClientRequest, continuation: CheckedContinuation<Result<HTTPClientResponse, HTTPClientError>, Never>) {
        self.request = request
        self.continuation = continuation
        body = request.body
    }

    deinit { curl_slist_free_all(headerList) }

    /// Sets every option on a fresh (or reset) easy handle.
    func configure(_ handle: UnsafeMutableRawPointer) {
        self.handle = handle
        for (name, value) in request.headers { headerList = curl_slist_append(headerList, "\(name): \(value)") }
        // Without this curl sends "Expect: 100-continue" for larger bodies and waits for an answer.
        headerList = curl_slist_append(headerList, "Expect:")
        let milliseconds = max(1, Int(request.timeout.secondsDouble * 1000))
        let context = Unmanaged.passUnretained(sink).toOpaque()
        sink.limit = max(0, request.maxResponseBytes)
        hearth_curl_setopt_string(handle, CURLOPT_URL, request.url)
        hearth_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        hearth_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, milliseconds)
        hearth_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, min(milliseconds, 10_000))
        hearth_curl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1)
        hearth_curl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2)
        hearth_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        hearth_curl_setopt_pointer(handle, CURLOPT_HTTPHEADER, headerList)
        hearth_curl_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION, curlBodyCallback)
        hearth_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, context)
        hearth_curl_setopt_data_callback(handle, CURLOPT_HEADERFUNCTION, curlHeaderCallback)
        hearth_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, context)
        hearth_curl_setopt_pointer(handle, CURLOPT_PRIVATE, Unmanaged.passUnretained(self).toOpaque())
        let method = request.method.uppercased()
        switch method {
        case "GET": hearth_curl_setopt_long(handle, CURLOPT_HTTPGET, 1)
        case "HEAD": hearth_curl_setopt_long(handle, CURLOPT_NOBODY, 1)
        default:
            hearth_curl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method)
            hearth_curl_setopt_off_t(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
            // The bytes must stay put until the transfer ends: `body` is this object's, which lives as long.
            body.withUnsafeMutableBytes { p in
                _ = hearth_curl_setopt_pointer(handle, CURLOPT_POSTFIELDS, p.baseAddress ?? UnsafeMutableRawPointer(bitPattern: 1))
            }
        }
    }

    func complete(_ code: CURLcode) {
        let method = request.method.uppercased()
        if sink.overflowed {
            continuation.resume(returning: .failure(HTTPClientError(kind: .responseTooLarge,
                                                                    message: "\(method) \(request.url): the response is larger than \(request.maxResponseBytes) bytes")))
            return
        }
        guard code == CURLE_OK else {
            let message = String(cString: curl_easy_strerror(code))
            let kind: HTTPClientError.Kind
            switch code {
            case CURLE_OPERATION_TIMEDOUT: kind = .timeout
            case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR: kind = .connection
            case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CACERT_BADFILE: kind = .tls
            case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL: kind = .invalidRequest
            default: kind = .other
            }
            continuation.resume(returning: .failure(HTTPClientError(kind: kind, message: "\(method) \(request.url): \(message)")))
            return
        }
        var status = 0
        if let handle { hearth_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status) }
        continuation.resume(returning: .success(HTTPClientResponse(status: status, headers: sink.headers, body: sink.body)))
    }
}

/// The thread that runs curl's multi handle. Other threads only `submit` (under the lock) and wake
/// it with `curl_multi_wakeup`, the one multi call documented as safe from any thread.
final class CurlLoop: @unchecked Sendable {  // `multi` and `idleHandles` belong to the loop thread
    private let incoming = Mutex<(transfers: [Transfer], stopped: Bool)>(([], false))
    private let multi: UnsafeMutableRawPointer
    private var idleHandles: [UnsafeMutableRawPointer] = []
    private var running: [ObjectIdentifier: Transfer] = [:]

    init() {
        multi = curl_multi_init()
        let thread = Thread { [self] in run() }
        thread.name = "hearth.http-client"
        thread.start()
    }

    func submit(_ transfer: Transfer) {
        let accepted = incoming.withLock { s -> Bool in
            guard !s.stopped else { return false }
            s.transfers.append(transfer)
            return true
        }
        if accepted {
            curl_multi_wakeup(multi)
        } else {
            transfer.continuation.resume(returning: .failure(HTTPClientError(kind: .other, message: "the HTTP client is shut down")))
        }
    }

    func stop() {
        incoming.withLock { $0.stopped = true }
        curl_multi_wakeup(multi)
    }

    private func run() {
        var still: Int32 = 0
        while true {
            let (new, stopped) = incoming.withLock { s -> ([Transfer], Bool) in
                defer { s.transfers.removeAll() }
                return (s.transfers, s.stopped)
            }
            if stopped && running.isEmpty && new.isEmpty { break }
            for transfer in new {
                let handle: UnsafeMutableRawPointer
                if let reused = idleHandles.popLast() {
                    curl_easy_reset(reused)  // options to defaults; connections stay in the multi's cache
                    handle = reused
                } else if let fresh = curl_easy_init() {
                    handle = fresh
                } else {
                    transfer.continuation.resume(returning: .failure(HTTPClientError(kind: .other, message: "curl_easy_init failed")))
                    continue
                }
                transfer.configure(handle)
                running[ObjectIdentifier(transfer)] = transfer
                curl_multi_add_handle(multi, handle)
            }
            curl_multi_perform(multi, &still)
            var queued: Int32 = 0
            while let message = curl_multi_info_read(multi, &queued) {
                guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle else { continue }
                let code = message.pointee.data.result
                var privatePointer: UnsafeMutableRawPointer?
                _ = hearth_curl_getinfo_pointer(handle, CURLINFO_PRIVATE, &privatePointer)
                curl_multi_remove_handle(multi, handle)
                if let privatePointer {
                    let transfer = Unmanaged<Transfer>.fromOpaque(privatePointer).takeUnretainedValue()
                    running.removeValue(forKey: ObjectIdentifier(transfer))
                    transfer.complete(code)
                }
                if idleHandles.count < 32 { idleHandles.append(handle) } else { curl_easy_cleanup(handle) }
            }
            var ready: Int32 = 0
            curl_multi_poll(multi, nil, 0, 1000, &ready)
        }
        for handle in idleHandles { curl_easy_cleanup(handle) }
        curl_multi_cleanup(multi)
    }
}

/// Collects a response while curl delivers it (only ever touched by the performing thread).
final class ResponseSink {
    var body: [UInt8] = []
    var headers = HTTPHeaders()
    var limit = Int.max
    var overflowed = false

    func header(_ line: String) {
        if line.hasPrefix("HTTP/") {
            headers = HTTPHeaders()  // a new status line (after a 100 Continue, say) starts over
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].trimmingCharacters(in: .whitespaces)
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
        headers.add(name, value)
    }
}

let curlBodyCallback: hearth_curl_data_callback = { buffer, size, count, context in
    guard let buffer, let context else { return 0 }
    let n = size * count
    let sink = Unmanaged<ResponseSink>.fromOpaque(context).takeUnretainedValue()
    guard n <= sink.limit - sink.body.count else {
        sink.overflowed = true
        return 0  // anything other than n makes curl stop the transfer
    }
    buffer.withMemoryRebound(to: UInt8.self, capacity: n) { sink.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: n)) }
    return n
}

let curlHeaderCallback: hearth_curl_data_callback = { buffer, size, count, context in
    guard let buffer, let context else { return 0 }
    let n = size * count
    let sink = Unmanaged<ResponseSink>.fromOpaque(context).takeUnretainedValue()
    let line = buffer.withMemoryRebound(to: UInt8.self, capacity: n) { String(decoding: UnsafeBufferPointer(start: $0, count: n), as: UTF8.self) }
    sink.header(line)
    return n
}

import Foundation
