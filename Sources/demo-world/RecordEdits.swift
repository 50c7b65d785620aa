/// Which records (tiles, places) of one file `--edit-fraction` rewrites, and the stream their new
/// bytes come from. Edits come in runs of neighbouring records, as map edits do (a new road touches
/// the tiles next to each other): `fraction` of the records (at least one), in runs of `runLength`
/// at places drawn from the stream.
struct RecordEdits: Sendable {
    /// Records in one run of edits.
    static let runLength = 8

    /// Draws the places and the new bytes; separate from the base content's stream so the base
    /// layout is unchanged.
    var random: SeededRandom
    private let fraction: Double

    init(_ edit: BundlePlan.Edit, _ kind: String, _ region: String, seed: UInt64) {
        random = SeededRandom("edit", kind, region, edit.version, seed: seed)
        fraction = edit.fraction
    }

    /// The indices (ascending) of the records to rewrite among `count`.
    mutating func pick(among count: Int) -> [Int] {
        guard count > 0 else { return [] }
        let wanted = min(count, max(1, Int((Double(count) * fraction).rounded())))
        // The records fall into slots of `runLength`; whole slots are drawn until enough are picked.
        let slots = (count + RecordEdits.runLength - 1) / RecordEdits.runLength
        var order = Array(0..<slots)
        for i in stride(from: slots - 1, to: 0, by: -1) { order.swapAt(i, random.below(i + 1)) }
        var picked: [Int] = []
        for slot in order where picked.count < wanted {
            let start = slot * RecordEdits.runLength
            picked += (start..<min(count, start + RecordEdits.runLength)).prefix(wanted - picked.count)
        }
        return picked.sorted()
    }
}
