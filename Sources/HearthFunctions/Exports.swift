// Unit authors write `import HearthFunctions` and get the vocabulary (Value, DocumentPath,
// HTTPSError, RetryPolicy…) with it.
@_exported import HearthModel
