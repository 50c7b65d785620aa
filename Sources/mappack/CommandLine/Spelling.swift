/// "Did you mean" for the command line.
enum Spelling {
    /// The candidate closest to `word` by edit distance, if it is close enough to be a typo
    /// (two edits, or a third of a long word, at most 3).
    static func nearest(to word: String, among candidates: [String]) -> String? {
        let limit = min(3, max(2, word.count / 3))
        return candidates.map { ($0, distance(word, $0)) }.filter { $0.1 <= limit }.min { $0.1 < $1.1 }?.0
    }

    /// Levenshtein distance (insert, delete, replace; one row at a time).
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8), b = Array(b.utf8)
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
