import MapFormat

/// "Did you mean" for the command line.
enum Spelling {
    /// The candidate closest to `word` by edit distance, if it is close enough to be a typo
    /// (two edits, or a third of a long word, at most 3).
    static func nearest(to word: String, among candidates: [String]) -> String? {
        let limit = min(3, max(2, word.count / 3))
        return candidates.map { ($0, EditDistance.between(Array(word.utf8), Array($0.utf8))) }.filter { $0.1 <= limit }.min { $0.1 < $1.1 }?.0
    }
}
