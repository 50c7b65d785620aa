import Foundation
import MapBuild
import MapFormat

/// A `SizeReport` as one self-contained HTML page (no script, font or image from the network):
/// a summary, for a diff the regions added, removed and changed, one legend, a treemap per measure
/// (grouped by top-level region and country, then region, then bundle kind, area by bytes; each
/// rectangle carries `data-region`, `data-kind` and `data-bytes`), the region tree with sizes (not
/// for a diff), and the report's data as JSON (`<script type="application/json" id="report-data">`).
enum HTMLReport {
    static let width = 1000.0, height = 560.0

    static func render(_ report: SizeReport) throws -> String {
        var page = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="generator" content="mappack \(escape(MappackVersion.current))">
            <title>\(escape(report.title))</title>
            <style>
            body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d2430;background:#fff}
            h1{font-size:22px;margin:0 0 12px}h2{font-size:17px;margin:28px 0 8px}
            table{border-collapse:collapse}td,th{padding:2px 10px 2px 0;text-align:left}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
            svg{border:1px solid #c9ced6;max-width:100%;height:auto}svg text{font-size:11px;fill:#10151c;pointer-events:none}svg text.group{font-weight:600}
            .legend span{display:inline-block;margin-right:14px}.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-2px}
            ul.tree{list-style:none;padding-left:18px}ul.tree li{margin:1px 0}.id{color:#5a6472;font-size:12px}.size{font-variant-numeric:tabular-nums;color:#2a3340}
            table.changes td.id{color:#5a6472;font-size:12px}
            </style></head><body>
            <h1>\(escape(report.title))</h1>
            <table class="summary">
            """
        for line in report.summary where line.count == 2 {
            page += "<tr><th>\(escape(line[0]))</th><td>\(escape(line[1]))</td></tr>\n"
        }
        page += "</table>\n"
        if let changes = report.changes { page += changeTables(changes, unchanged: report.regionsUnchanged ?? 0) }
        let kinds = Array(Set(report.regions.flatMap { $0.parts.map(\.kind) })).sorted()
        page +=
            "<p class=\"legend\">" + kinds.map { "<span><i style=\"background:\(color(kind: $0))\"></i>\(escape($0))</span>" }.joined()
            + "</p>\n"
        for measure in report.measures {
            page += treemap(report, measure: measure, kinds: kinds)
        }
        // A diff lists the regions that changed above; the tree of the rest would be all unchanged.
        if report.changes == nil { page += regionTree(report) }
        let data = scriptSafe(String(decoding: try CanonicalJSON.encode(report), as: UTF8.self))
        page += "<script type=\"application/json\" id=\"report-data\">\(data)</script>\n</body></html>\n"
        return page
    }

    /// The regions as nested lists, each with its subtree's bytes per measure.
    private static func regionTree(_ report: SizeReport) -> String {
        let totals = Dictionary(uniqueKeysWithValues: report.measures.map { ($0, report.subtreeTotals($0)) })
        var html = "<section id=\"regions\"><h2>Regions (\(report.regions.count))</h2>\n<ul class=\"tree\">"
        var depth = 0
        for (region, level) in report.tree() {
            while depth < level {
                html += "<ul class=\"tree\">"
                depth += 1
            }
            while depth > level {
                html += "</ul>"
                depth -= 1
            }
            let sizes = report.measures.map { "\($0.title) \(ByteCount.format(totals[$0]?[region.id] ?? 0))" }.joined(separator: " · ")
            html +=
                "<li data-region=\"\(escape(region.id))\">\(escape(region.name)) <span class=\"id\">\(escape(region.id))</span> "
                + "<span class=\"size\">\(escape(sizes))</span></li>\n"
        }
        while depth > 0 {
            html += "</ul>"
            depth -= 1
        }
        return html + "</ul></section>\n"
    }

    /// One colour per kind, the same in every report (plan, inspect, diff) whatever other kinds
    /// the page holds: the known kinds have their own; another kind gets one of the rest by a hash
    /// of its name. All are readable under black text.
    static func color(kind: String) -> String {
        let known = [
            "overview": "#8dd3c7", "tiles": "#80b1d3", "search": "#fdb462", "routing": "#b3de69", "border": "#bc80bd", "other": "#d9d9d9",
        ]
        if let colour = known[kind] { return colour }
        let rest = ["#ffffb3", "#bebada", "#fb8072", "#fccde5", "#ccebc5", "#ffed6f"]
        var hash: UInt32 = 2_166_136_261
        for byte in kind.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return rest[Int(hash % UInt32(rest.count))]
    }

    static func f(_ value: Double) -> String { String(format: "%.2f", value) }

    static func geometry(_ rect: Treemap.Rect) -> String {
        "x=\"\(f(rect.x))\" y=\"\(f(rect.y))\" width=\"\(f(rect.width))\" height=\"\(f(rect.height))\""
    }

    /// JSON that stays one `<script>` element's text whatever its strings hold: `<`, `>` and `&`
    /// as `\u003c`, `\u003e`, `\u0026` (an HTML parser reads `</script`, `<!--` and `<script` in
    /// a script and changes state on them), and U+2028, U+2029 as `\u2028`, `\u2029` (line ends
    /// to older JavaScript). Outside strings JSON has none of these, so the escapes read back as
    /// the same text.
    static func scriptSafe(_ json: String) -> String {
        var out = ""
        out.reserveCapacity(json.utf8.count)
        for scalar in json.unicodeScalars {
            switch scalar {
            case "<": out += "\\u003c"
            case ">": out += "\\u003e"
            case "&": out += "\\u0026"
            case "\u{2028}": out += "\\u2028"
            case "\u{2029}": out += "\\u2029"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `text` with HTML's special characters escaped (also the viewer page of `mappack serve`).
    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}

/// A `SizeReport` as GitHub-flavoured Markdown, for a CI job summary (`$GITHUB_STEP_SUMMARY`).
enum MarkdownReport {
    static func render(_ report: SizeReport, top: Int = 20) -> String {
        var out = "### \(cell(report.title))\n\n| | |\n|---|---|\n"
        for line in report.summary where line.count == 2 { out += "| \(cell(line[0])) | \(cell(line[1])) |\n" }
        if let changes = report.changes { return out + changeTable(changes, unchanged: report.regionsUnchanged ?? 0, top: 50) }
        let totals = Dictionary(uniqueKeysWithValues: report.measures.map { ($0, report.subtreeTotals($0)) })
        let ranked = report.regions.sorted { a, b in
            let x = totals[report.measures[0]]?[a.id] ?? 0
            let y = totals[report.measures[0]]?[b.id] ?? 0
            return x != y ? x > y : a.id < b.id
        }
        out +=
            "\n| region | name | " + report.measures.map { "\($0.title) |" }.joined(separator: " ") + "\n|---|---|"
            + report.measures.map { _ in "---:|" }.joined() + "\n"
        for region in ranked.prefix(top) {
            out +=
                "| `\(cell(region.id))` | \(cell(region.name)) | "
                + report.measures.map { "\(ByteCount.format(totals[$0]?[region.id] ?? 0)) |" }.joined(separator: " ") + "\n"
        }
        if ranked.count > top { out += "\n\(ranked.count - top) more regions: see the HTML report (`--html`).\n" }
        return out
    }

    /// `text` as one table cell: on one line with its control characters shown escaped
    /// (`String.visible`: CR and LF would end the row and start a forged one), `|` as `\|`, and
    /// `&`, `<`, `>` as HTML entities (GitHub renders raw HTML in Markdown).
    static func cell(_ text: String) -> String {
        var out = ""
        for character in text.visible {
            switch character {
            case "|": out += "\\|"
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            default: out.append(character)
            }
        }
        return out
    }
}
