import MapFormat

extension HTMLReport {
    /// A diff's regions added, removed and changed, a table each (`<section id="added">`, …), and
    /// how many regions are the same on both sides, which no table lists.
    static func changeTables(_ changes: [RegionChange], unchanged: Int) -> String {
        var html = ""
        for kind in RegionChange.Change.allCases {
            let rows = changes.filter { $0.change == kind }
            html += "<section id=\"\(kind.rawValue)\"><h2>\(kind.heading) (\(rows.count))</h2>\n"
            guard !rows.isEmpty else {
                html += "<p>none</p></section>\n"
                continue
            }
            html += "<table class=\"changes\"><tr><th>region</th><th>name</th><th class=\"n\">bundles</th><th class=\"n\">bytes</th></tr>\n"
            for row in rows {
                html +=
                    "<tr data-change=\"\(kind.rawValue)\" data-region=\"\(escape(row.id))\" data-bytes=\"\(row.change == .changed ? row.bytesAdded : row.bytes)\">"
                    + "<td class=\"id\">\(escape(row.id))</td><td>\(escape(row.name))</td>"
                    + "<td class=\"n\">\(escape(row.bundlesText))</td><td class=\"n\">\(escape(row.bytesText))</td></tr>\n"
            }
            html += "</table></section>\n"
        }
        return html + "<p class=\"unchanged\">\(unchanged) \(unchanged == 1 ? "region" : "regions") unchanged (not listed).</p>\n"
    }
}

extension MarkdownReport {
    /// A diff's regions added, removed and changed as one table, at most `top` rows of each.
    static func changeTable(_ changes: [RegionChange], unchanged: Int, top: Int) -> String {
        guard !changes.isEmpty else { return "\nNo region changed; \(unchanged) unchanged.\n" }
        var out = "\n| region | name | change | bundles | bytes |\n|---|---|---|---:|---:|\n"
        var more: [String] = []
        for kind in RegionChange.Change.allCases {
            let rows = changes.filter { $0.change == kind }
            for row in rows.prefix(top) {
                out += "| `\(cell(row.id))` | \(cell(row.name)) | \(kind.rawValue) | \(cell(row.bundlesText)) | \(cell(row.bytesText)) |\n"
            }
            if rows.count > top { more.append("\(rows.count - top) more \(kind.rawValue)") }
        }
        if !more.isEmpty { out += "\n" + more.joined(separator: ", ") + ": see the HTML report (`--html`) or `--json`.\n" }
        return out + "\n\(unchanged) \(unchanged == 1 ? "region" : "regions") unchanged (not listed).\n"
    }
}

extension RegionChange.Change {
    /// The heading of its table.
    var heading: String {
        switch self {
        case .added: "Regions added"
        case .removed: "Regions removed"
        case .changed: "Regions changed"
        }
    }
}
