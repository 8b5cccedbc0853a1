import HearthModel
import HearthStore

/// Vector search: a query's `findNearest`
/// (https://firebase.google.com/docs/firestore/reference/rest/v1/StructuredQuery#FindNearest).
/// The query's filters select the candidates (Firestore's pre-filter); each candidate whose
/// `vectorField` holds a vector of the query vector's dimension is ranked by its distance, and the
/// nearest `limit` come back in that order. Hearth keeps no vector index: it compares every
/// candidate, which is exact (Firestore's answers are exact too, for a KNN query) and costs a
/// read of every candidate.
extension FirestoreREST {
    struct NearestSearch {
        enum Measure: String {
            case euclidean = "EUCLIDEAN", cosine = "COSINE", dotProduct = "DOT_PRODUCT"
        }

        var field: FieldPath
        var vector: [Double]
        var measure: Measure
        var limit: Int
        /// Where each result gets its distance (written over any value there), if anywhere.
        var resultField: FieldPath?
        /// For EUCLIDEAN and COSINE the largest distance kept; for DOT_PRODUCT the smallest.
        var threshold: Double?

        /// Reads `findNearest`.
        init(_ json: Value, names: FirestoreJSON) throws(HTTPSError) {
            let at = "structuredQuery.findNearest"
            guard case .map(let f) = json else { throw .invalidArgument("\(at): must be an object") }
            for key in f.keys where !["vectorField", "queryVector", "distanceMeasure", "limit", "distanceResultField", "distanceThreshold"].contains(key) {
                throw .invalidArgument("\(at): unknown field '\(key)'")
            }
            field = try FirestoreJSON.fieldReference(f["vectorField"], field: at + ".vectorField")
            guard let raw = f["queryVector"] else { throw .invalidArgument("\(at).queryVector: is required") }
            guard let components = try names.value(raw, field: at + ".queryVector").vectorComponents else {
                throw .invalidArgument("\(at).queryVector: must be a vector value ({\"__type__\": \"__vector__\", \"value\": [doubles]})")
            }
            guard !components.isEmpty, components.count <= Value.maxVectorDimensions else {
                throw .invalidArgument("\(at).queryVector: must have 1 to \(Value.maxVectorDimensions) dimensions (got \(components.count))")
            }
            guard components.allSatisfy(\.isFinite) else { throw .invalidArgument("\(at).queryVector: every component must be a finite number") }
            vector = components
            switch f["distanceMeasure"] {
            case .string("EUCLIDEAN")?, .int(1)?: measure = .euclidean
            case .string("COSINE")?, .int(2)?: measure = .cosine
            case .string("DOT_PRODUCT")?, .int(3)?: measure = .dotProduct
            case nil, .null?, .string("DISTANCE_MEASURE_UNSPECIFIED")?, .int(0)?:
                throw .invalidArgument("\(at).distanceMeasure: is required (EUCLIDEAN, COSINE or DOT_PRODUCT)")
            case let other?: throw .invalidArgument("\(at).distanceMeasure: '\(other)' is not EUCLIDEAN, COSINE or DOT_PRODUCT")
            }
            if measure == .cosine && components.allSatisfy({ $0 == 0 }) {
                throw .invalidArgument("\(at).queryVector: a COSINE search needs a vector that is not all zeros (it has no direction)")
            }
            guard let limitJSON = f["limit"] else { throw .invalidArgument("\(at).limit: is required") }
            // Int32Value: a bare number in JSON, or the wrapper's object form.
            limit = try FirestoreJSON.int32(limitJSON["value"] ?? limitJSON, field: at + ".limit", minimum: 1)
            guard limit <= 1000 else { throw .invalidArgument("\(at).limit: must be a positive integer of no more than 1000 (got \(limit))") }
            switch f["distanceResultField"] {
            case nil, .null?, .string("")?: resultField = nil
            case .string(let text)?:
                let path = try FirestoreJSON.fieldPath(text, field: at + ".distanceResultField")
                // A document field name: not reserved, and not inside the vector it measures.
                if let reserved = path.segments.first(where: { $0.utf8.first == 95 && PathRules.isReserved(Substring($0)) }) {
                    throw .invalidArgument("\(at).distanceResultField: field names of the form __.*__ are reserved ('\(reserved)')")
                }
                if path.segments.count > field.segments.count, path.segments.starts(with: field.segments, by: UTF8Key.equal) {
                    throw .invalidArgument("\(at).distanceResultField: '\(path)' is inside the vector field '\(field)'")
                }
                resultField = path
            case let other?: throw .invalidArgument("\(at).distanceResultField: must be a string (got \(other.typeName))")
            }
            switch f["distanceThreshold"].map({ $0["value"] ?? $0 }) {
            case nil, .null?: threshold = nil
            case .double(let d)?: threshold = d
            case .int(let i)?: threshold = Double(i)
            case .string(let s)?:
                guard let d = Double(s) else { throw .invalidArgument("\(at).distanceThreshold: '\(s.prefix(40))' is not a number") }
                threshold = d
            case let other?: throw .invalidArgument("\(at).distanceThreshold: must be a number (got \(other.typeName))")
            }
            if let threshold, threshold.isNaN { throw .invalidArgument("\(at).distanceThreshold: must be a number, not NaN") }
        }

        /// The distance from the query vector to `v` (of the same dimension); NaN when there is
        /// none (a COSINE distance to a zero vector).
        func distance(to v: [Double]) -> Double {
            switch measure {
            case .euclidean:
                var sum = 0.0
                for (a, b) in zip(vector, v) { sum += (a - b) * (a - b) }
                return sum.squareRoot()
            case .dotProduct:
                var dot = 0.0
                for (a, b) in zip(vector, v) { dot += a * b }
                return dot
            case .cosine:
                var dot = 0.0, left = 0.0, right = 0.0
                for (a, b) in zip(vector, v) {
                    dot += a * b
                    left += a * a
                    right += b * b
                }
                return 1 - dot / (left.squareRoot() * right.squareRoot())
            }
        }

        /// The nearest `limit` of `candidates`, nearest first (ties in name order), each with its
        /// distance in `resultField` when asked; and how many candidates held a vector of the
        /// right dimension (the entries a vector index would have read).
        func nearest(_ candidates: [StoredDocument]) -> (documents: [StoredDocument], vectors: Int) {
            var ranked: [(distance: Double, document: StoredDocument)] = []
            var vectors = 0
            for doc in candidates {
                guard let items = Value.map(doc.fields).value(at: field)?.vectorItems, items.count == vector.count else { continue }
                vectors += 1
                let d = distance(to: items.map { if case .double(let x) = $0 { x } else { 0 } })
                guard !d.isNaN else { continue }
                if let threshold, measure == .dotProduct ? d < threshold : d > threshold { continue }
                ranked.append((d, doc))
            }
            let larger = measure == .dotProduct  // a larger dot product is nearer
            ranked.sort { a, b in
                if a.distance != b.distance { return larger ? a.distance > b.distance : a.distance < b.distance }
                return a.document.path < b.document.path
            }
            let documents = ranked.prefix(limit).map { distance, doc in
                guard let resultField else { return doc }
                var fields = doc.fields
                Value.set(.double(distance), at: resultField.segments[...], in: &fields)
                return StoredDocument(path: doc.path, fields: fields, createTime: doc.createTime, updateTime: doc.updateTime)
            }
            return (documents, vectors)
        }
    }
}
