/// A binary heap kept in an array: the element `precedes` puts first is at index 0. The timers'
/// deadlines (earliest first) and a query's best names (the worst kept name first) use it.
extension Array {
    /// Adds `element`, sifting it up.
    @inlinable
    public mutating func heapPush(_ element: Element, by precedes: (Element, Element) -> Bool) {
        append(element)
        var child = count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(self[child], self[parent]) else { break }
            swapAt(child, parent)
            child = parent
        }
    }

    /// Removes the first element (the top); the array must not be empty.
    @inlinable
    public mutating func heapRemoveTop(by precedes: (Element, Element) -> Bool) {
        swapAt(0, count - 1)
        removeLast()
        heapSiftDown(from: 0, by: precedes)
    }

    /// Replaces the top with `element` and restores the order; the array must not be empty.
    @inlinable
    public mutating func heapReplaceTop(with element: Element, by precedes: (Element, Element) -> Bool) {
        self[0] = element
        heapSiftDown(from: 0, by: precedes)
    }

    @inlinable
    mutating func heapSiftDown(from start: Int, by precedes: (Element, Element) -> Bool) {
        var parent = start
        while true {
            let left = 2 * parent + 1, right = left + 1
            var first = parent
            if left < count && precedes(self[left], self[first]) { first = left }
            if right < count && precedes(self[right], self[first]) { first = right }
            if first == parent { return }
            swapAt(parent, first)
            parent = first
        }
    }
}
