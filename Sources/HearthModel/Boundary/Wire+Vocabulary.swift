// Boundary encodings of the vocabulary types messages carry. Each writes its fields in declaration
// order; decoding validates what the type's own initializers validate (paths, field paths), so a
// malformed message from either side is refused with the same error a bad argument would get.

extension WireWriter {
    /// A string-backed enum, by its raw value (robust to reordering cases).
    public mutating func name<E: RawRepresentable>(_ e: E) where E.RawValue == String { string(e.rawValue) }
}

extension WireReader {
    public mutating func name<E: RawRepresentable>(_ type: E.Type) throws(WireError) -> E where E.RawValue == String {
        let raw = try string()
        guard let e = E(rawValue: raw) else { throw failure("'\(Printable.quoted(raw, limit: 40))' is not a \(E.self)") }
        return e
    }
}

// MARK: documents

extension StoredDocument: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.write(path)
        w.fields(fields)
        w.write(createTime)
        w.write(updateTime)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(path: try r.read(), fields: try r.fields(), createTime: try r.read(), updateTime: try r.read())
    }
}

extension DocumentListing: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.write(path)
        w.bool(exists)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(path: try r.read(), exists: try r.bool())
    }
}

extension FieldTransform: WireCodable {
    public func encode(to w: inout WireWriter) {
        switch self {
        case .serverTimestamp: w.byte(1)
        case .increment(let v): w.byte(2); w.value(v)
        case .arrayUnion(let v): w.byte(3); w.list(v)
        case .arrayRemove(let v): w.byte(4); w.list(v)
        case .delete: w.byte(5)
        case .maximum(let v): w.byte(6); w.value(v)
        case .minimum(let v): w.byte(7); w.value(v)
        }
    }

    public init(from r: inout WireReader) throws(WireError) {
        switch try r.byte() {
        case 1: self = .serverTimestamp
        case 2: self = .increment(try r.value())
        case 3: self = .arrayUnion(try r.list())
        case 4: self = .arrayRemove(try r.list())
        case 5: self = .delete
        case 6: self = .maximum(try r.value())
        case 7: self = .minimum(try r.value())
        case let tag: throw r.failure("unknown field transform \(tag)")
        }
    }
}

extension FieldTransformSpec: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.write(field)
        w.write(transform)
    }

    public init(from r: inout WireReader) throws(WireError) { self.init(try r.read(), try r.read()) }
}

extension Precondition: WireCodable {
    public func encode(to w: inout WireWriter) {
        switch self {
        case .exists(let e): w.byte(e ? 1 : 2)
        case .updateTime(let t): w.byte(3); w.write(t)
        }
    }

    public init(from r: inout WireReader) throws(WireError) {
        switch try r.byte() {
        case 1: self = .exists(true)
        case 2: self = .exists(false)
        case 3: self = .updateTime(try r.read())
        case let tag: throw r.failure("unknown precondition \(tag)")
        }
    }
}

extension DocumentWrite: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.write(path)
        switch operation {
        case .delete: w.byte(0)
        case .update(let fields, let mask):
            w.byte(1)
            w.fields(fields)
            w.write(mask)
        }
        w.list(transforms)
        w.write(precondition)
    }

    public init(from r: inout WireReader) throws(WireError) {
        let path: DocumentPath = try r.read()
        let operation: Operation
        switch try r.byte() {
        case 0: operation = .delete
        case 1: operation = .update(fields: try r.fields(), mask: try r.optional([FieldPath].self))
        case let tag: throw r.failure("unknown write operation \(tag)")
        }
        self.init(path: path, operation: operation, transforms: try r.list(), precondition: try r.optional())
    }
}

extension WriteResult: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.write(updateTime)
        w.list(transformResults)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(updateTime: try r.optional(), transformResults: try r.list())
    }
}

extension CommitResult: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.write(commitTime)
        w.list(writeResults)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(commitTime: try r.read(), writeResults: try r.list())
    }
}

// MARK: queries

extension QuerySpec.Filter: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.write(field)
        w.name(op)
        w.value(value)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(try r.read(), try r.name(QuerySpec.Operator.self), try r.value())
    }
}

extension QuerySpec.Order: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.write(field)
        w.name(direction)
    }

    public init(from r: inout WireReader) throws(WireError) { self.init(try r.read(), try r.name(QuerySpec.Direction.self)) }
}

extension QuerySpec.Cursor: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.list(values)
        w.bool(before)
    }

    public init(from r: inout WireReader) throws(WireError) { self.init(values: try r.list(), before: try r.bool()) }
}

extension QuerySpec: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.write(parent)
        w.string(collectionID)
        w.bool(allDescendants)
        w.list(filters)
        w.list(orderBy)
        w.write(startAt)
        w.write(endAt)
        w.write(limit)
        w.bool(limitToLast)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(parent: try r.optional(), collectionID: try r.string(), allDescendants: try r.bool(), filters: try r.list(),
                  orderBy: try r.list(), startAt: try r.optional(), endAt: try r.optional(), limit: try r.optional(),
                  limitToLast: try r.bool())
    }
}

// MARK: HTTP

extension HTTPHeaders: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.varint(UInt64(fields.count))
        for field in fields {
            w.string(field.name)
            w.string(field.value)
        }
    }

    public init(from r: inout WireReader) throws(WireError) {
        let n = try r.count()
        var fields: [(name: String, value: String)] = []
        fields.reserveCapacity(Swift.min(n, 4096))  // a count is a claim until the fields are read
        for _ in 0..<n { fields.append((try r.string(), try r.string())) }
        self.init(fields)
    }
}

// MARK: users

extension UserRecord.Metadata: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.write(creationTime)
        w.write(lastSignInTime)
        w.write(lastRefreshTime)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(creationTime: try r.read(), lastSignInTime: try r.optional(), lastRefreshTime: try r.optional())
    }
}

extension UserRecord.ProviderInfo: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.string(providerId)
        w.string(uid)
        w.write(email)
        w.write(displayName)
        w.write(photoURL)
        w.write(phoneNumber)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(providerId: try r.string(), uid: try r.string(), email: try r.optional(), displayName: try r.optional(),
                  photoURL: try r.optional(), phoneNumber: try r.optional())
    }
}

extension UserRecord: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.string(uid)
        w.write(email)
        w.bool(emailVerified)
        w.write(displayName)
        w.write(photoURL)
        w.write(phoneNumber)
        w.bool(disabled)
        w.write(metadata)
        w.list(providerData)
        w.write(customClaims.map(Value.map))
        w.write(tokensValidAfterTime)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(uid: try r.string(), email: try r.optional(), emailVerified: try r.bool(), displayName: try r.optional(),
                  photoURL: try r.optional(), phoneNumber: try r.optional(), disabled: try r.bool(), metadata: try r.read(),
                  providerData: try r.list(), customClaims: try r.optionalFields(), tokensValidAfterTime: try r.optional())
    }
}

extension NewUser: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.write(uid)
        w.write(email)
        w.write(emailVerified)
        w.write(displayName)
        w.write(photoURL)
        w.write(phoneNumber)
        w.write(disabled)
        w.write(providerToLink)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(uid: try r.optional(), email: try r.optional(), emailVerified: try r.optional(), displayName: try r.optional(),
                  photoURL: try r.optional(), phoneNumber: try r.optional(), disabled: try r.optional(), providerToLink: try r.optional())
    }
}

extension UserUpdate: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.write(email)
        w.write(emailVerified)
        w.write(displayName)
        w.write(photoURL)
        w.write(phoneNumber)
        w.write(disabled)
        w.write(customClaims.map(Value.map))
        w.write(providerToLink)
        w.write(providersToUnlink)
        w.write(deleteDisplayName)
        w.write(deletePhotoURL)
        w.write(deletePhoneNumber)
        w.write(deleteEmail)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(email: try r.optional(), emailVerified: try r.optional(), displayName: try r.optional(), photoURL: try r.optional(),
                  phoneNumber: try r.optional(), disabled: try r.optional(), customClaims: try r.optionalFields(),
                  providerToLink: try r.optional(), providersToUnlink: try r.optional())
        deleteDisplayName = try r.optional()
        deletePhotoURL = try r.optional()
        deletePhoneNumber = try r.optional()
        deleteEmail = try r.optional()
    }
}

extension WireReader {
    /// An optional map of values (custom claims).
    public mutating func optionalFields() throws(WireError) -> [String: Value]? {
        guard let value = try optional(Value.self) else { return nil }
        guard case .map(let m) = value else { throw failure("expected a map of values") }
        return m
    }
}

// MARK: the manifest

extension CORSPolicy: WireCodable {
    public func encode(to w: inout WireWriter) {
        switch self {
        case .allowAll: w.byte(1)
        case .disabled: w.byte(2)
        case .origins(let list): w.byte(3); w.list(list)
        }
    }

    public init(from r: inout WireReader) throws(WireError) {
        switch try r.byte() {
        case 1: self = .allowAll
        case 2: self = .disabled
        case 3: self = .origins(try r.list())
        case let tag: throw r.failure("unknown CORS policy \(tag)")
        }
    }
}

extension RetryPolicy: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.write(maxAttempts)
        w.write(minBackoff)
        w.write(maxBackoff)
        w.int(maxDoublings)
        w.write(maxRetryDuration)
        w.double(jitter)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(maxAttempts: try r.optional(), minBackoff: try r.read(), maxBackoff: try r.read(), maxDoublings: try r.intValue(),
                  maxRetryDuration: try r.optional(), jitter: try r.double())
    }
}

extension RateLimits: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.write(maxDispatchesPerSecond)
        w.write(maxConcurrentDispatches)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(maxDispatchesPerSecond: try r.optional(), maxConcurrentDispatches: try r.optional())
    }
}

extension Trigger: WireCodable {
    public func encode(to w: inout WireWriter) {
        switch self {
        case .callable: w.byte(1)
        case .request: w.byte(2)
        case .schedule(let schedule, let zone): w.byte(3); w.string(schedule); w.string(zone)
        case .task: w.byte(4)
        case .document(let kind, let pattern): w.byte(5); w.name(kind); w.string(pattern)
        case .user(let kind): w.byte(6); w.name(kind)
        }
    }

    public init(from r: inout WireReader) throws(WireError) {
        switch try r.byte() {
        case 1: self = .callable
        case 2: self = .request
        case 3: self = .schedule(schedule: try r.string(), timeZone: try r.string())
        case 4: self = .task
        case 5: self = .document(try r.name(DocumentEventKind.self), pattern: try r.string())
        case 6: self = .user(try r.name(UserEventKind.self))
        case let tag: throw r.failure("unknown trigger \(tag)")
        }
    }
}

extension FunctionOptions: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.write(timeout)
        w.write(cors)
        w.write(enforceAppCheck)
        w.write(heartbeat)
        w.write(retry)
        w.write(rateLimits)
        w.write(dispatchDeadline)
        w.write(secrets)
        w.write(region)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(timeout: try r.optional(), cors: try r.optional(), enforceAppCheck: try r.optional(), heartbeat: try r.optional(),
                  retry: try r.optional(), rateLimits: try r.optional(), dispatchDeadline: try r.optional(), secrets: try r.optional(),
                  region: try r.optional())
    }
}

extension FunctionSpec: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.string(name)
        w.write(trigger)
        w.write(options)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(name: try r.string(), trigger: try r.read(), options: try r.read())
    }
}

extension FunctionManifest: WireCodable {
    public func encode(to w: inout WireWriter) {
        w.string(unit)
        w.int(abiVersion)
        w.list(functions)
    }

    public init(from r: inout WireReader) throws(WireError) {
        self.init(unit: try r.string(), abiVersion: try r.intValue(), functions: try r.list())
    }
}
