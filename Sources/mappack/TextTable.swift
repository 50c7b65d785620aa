/// A table whose columns line up: two spaces between columns, sizes and counts right-aligned,
/// text left-aligned, the header above. Built whole, then printed in one write.
struct TextTable {
    enum Alignment { case left, right }

    private let titles: [String]
    private let alignments: [Alignment]
    private var rows: [[String]] = []

    /// A table with these column titles and alignments.
    init(_ columns: [(String, Alignment)]) {
        titles = columns.map(\.0)
        alignments = columns.map(\.1)
    }

    /// Adds a row: one cell per column, each on one line with its control characters shown
    /// escaped (`String.visible`), so a name cannot split a row or drive the terminal.
    mutating func add(_ cells: [String]) { rows.append(cells.map(\.visible)) }

    /// The header and the rows, one per line, without a final newline; the last column is not padded
    /// when it is left-aligned, so no line ends in spaces.
    var text: String {
        let all = [titles] + rows
        let widths = titles.indices.map { column in all.map { $0.indices.contains(column) ? $0[column].displayWidth : 0 }.max() ?? 0 }
        var lines: [String] = []
        lines.reserveCapacity(all.count)
        for row in all {
            var line = ""
            for column in titles.indices {
                let cell = row.indices.contains(column) ? row[column] : ""
                let last = column == titles.count - 1
                if column > 0 { line += "  " }
                switch alignments[column] {
                case .right: line += cell.leftPadded(widths[column])
                case .left: line += last ? cell : cell.rightPadded(widths[column])
                }
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}
