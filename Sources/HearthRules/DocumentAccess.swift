import HearthModel

/// The documents rules may read with `get()`, `exists()`, `getAfter()` and `existsAfter()`,
/// through closures the caller supplies, and Firebase's limit on how many
/// (https://firebase.google.com/docs/firestore/security/rules-conditions#access_other_documents):
/// 10 distinct documents for a single-document request or a query, 20 for a transaction or batched
/// write, where one `DocumentAccess` is shared by the checks of all its writes. Reading the same
/// document again is served from the cache and not counted again. Going past the limit denies
/// the request.
///
/// Used by one request on one thread; not Sendable.
public final class DocumentAccess {
    public typealias Reader = (DocumentPath) throws -> [String: Value]?

    public static let singleDocumentLimit = 10
    public static let multiDocumentLimit = 20

    public let limit: Int
    private let read: Reader
    private let readAfter: Reader?
    private var cache: [DocumentPath: [String: Value]?] = [:]
    private var afterCache: [DocumentPath: [String: Value]?] = [:]

    /// Distinct documents read so far.
    public private(set) var count = 0

    /// - Parameters:
    ///   - read: the stored document at a path, nil when there is none.
    ///   - readAfter: the document as it will be once the whole write (batch, transaction) is
    ///     applied, for `getAfter`. When nil, `getAfter` of the document being written is the
    ///     request's incoming data, and of any other document what `read` returns.
    public init(limit: Int = DocumentAccess.singleDocumentLimit, read: @escaping Reader, readAfter: Reader? = nil) {
        self.limit = limit
        self.read = read
        self.readAfter = readAfter
    }

    /// No document can be read: `get()` and `exists()` deny with that reason.
    public static func unavailable() -> DocumentAccess {
        DocumentAccess(limit: 0, read: { _ in nil })
    }

    enum Failure: Error {
        case limit(Int)
        case reader(String)
    }

    func document(_ path: DocumentPath, after: Bool, own: (path: DocumentPath, data: [String: Value]?)?) throws(Failure) -> [String: Value]? {
        if after {
            if let cached = afterCache[path] { return cached }
        } else if let cached = cache[path] {
            return cached
        }
        guard limit > 0 else { throw .reader("get() and exists() cannot read documents in this evaluation") }
        guard count < limit else { throw .limit(limit) }
        count += 1
        let result: [String: Value]?
        do {
            if after, let readAfter {
                result = try readAfter(path)
            } else if after, let own, own.path == path {
                result = own.data
            } else {
                result = try read(path)
            }
        } catch {
            throw .reader("reading \(path) failed: \(error)")
        }
        if after { afterCache[path] = .some(result) } else { cache[path] = .some(result) }
        return result
    }
}

@available(*, unavailable)
extension DocumentAccess: Sendable {}
