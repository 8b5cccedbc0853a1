import Foundation
import HearthModel
#if canImport(Glibc)
import Glibc
#endif

/// A file of lines written in large pieces: lines collect in a buffer that goes out with one
/// `write(2)` per megabyte; `finish` flushes, syncs and closes. The file is created new (never
/// over an existing one), readable by its owner only: exports hold password hashes.
final class LineFileWriter {
    let path: String
    private var fd: Int32
    private var buffer: [UInt8] = []
    private static let flushSize = 1 << 20

    init(path: String) throws(ExportError) {
        self.path = path
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ExportError("cannot create \(path): \(String(cString: strerror(errno)))") }
        buffer.reserveCapacity(LineFileWriter.flushSize + 4096)
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Appends `line` and a newline.
    func append(_ line: [UInt8]) throws(ExportError) {
        buffer.append(contentsOf: line)
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count >= LineFileWriter.flushSize { try flush() }
    }

    func write(_ bytes: [UInt8]) throws(ExportError) {
        buffer.append(contentsOf: bytes)
        try flush()
    }

    private func flush() throws(ExportError) {
        var offset = 0
        while offset < buffer.count {
            let n = buffer.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ExportError("cannot write \(path): \(String(cString: strerror(errno)))")
            }
            offset += n
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Flushes, syncs to disk and closes.
    func finish() throws(ExportError) {
        try flush()
        guard fsync(fd) == 0 else { throw ExportError("cannot sync \(path): \(String(cString: strerror(errno)))") }
        close(fd)
        fd = -1
    }
}

/// A file read line by line, a megabyte at a time. Lines are numbered from 1; a last line
/// without its newline means the file was cut short, and is refused rather than read.
final class LineFileReader {
    let name: String
    private var fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false
    /// The number of the line `next` returned last.
    private(set) var lineNumber = 0
    /// Longer lines are refused (a document is at most 1 MiB stored; its JSON can be a few times that).
    static let maxLineBytes = 64 << 20
    private static let chunk = 1 << 20

    /// Opens `path`; `name` is what errors call it.
    init(path: String, name: String) throws(ImportError) {
        self.name = name
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ImportError(file: name, "cannot open \(path): \(String(cString: strerror(errno)))") }
    }

    deinit { if fd >= 0 { close(fd) } }

    /// The next line without its newline, or nil at the end of the file.
    func next() throws(ImportError) -> ArraySlice<UInt8>? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[start..<newline]
                start = newline + 1
                lineNumber += 1
                return line
            }
            if buffer.count - start > LineFileReader.maxLineBytes {
                throw ImportError(file: name, line: lineNumber + 1, "the line is longer than \(LineFileReader.maxLineBytes >> 20) MiB")
            }
            if atEnd {
                guard start == buffer.count else {
                    throw ImportError(file: name, line: lineNumber + 1, "the last line has no newline at its end: the file is cut short")
                }
                return nil
            }
            try fill()
        }
    }

    private func fill() throws(ImportError) {
        if start > 0 {
            buffer.removeFirst(start)
            start = 0
        }
        let old = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: LineFileReader.chunk))
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + old, LineFileReader.chunk) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else {
                let reason = String(cString: strerror(errno))
                buffer.removeLast(LineFileReader.chunk)
                throw ImportError(file: name, line: lineNumber + 1, "cannot read: \(reason)")
            }
            buffer.removeLast(LineFileReader.chunk - n)
            if n == 0 { atEnd = true }
            return
        }
    }
}

/// An export refused or failed: what went wrong. Whatever it had written is removed.
public struct ExportError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
