import Foundation
import MapBuild
import MapFetch
import MapFormat
import MapIO

/// `mappack plan RECIPE`: everything a build would do, with sizes, without downloading.
enum PlanCommand {
    static func run(_ raw: [String], terminal: Terminal) throws -> ExitCode {
        let arguments = try Arguments(raw, verb: Verbs.plan)
        let recipePath = try arguments.expect(["recipe"])[0]
        let cache = DownloadCache(root: FileSystem.absolute(arguments.option(Verbs.cache) ?? DownloadCache.defaultRoot()))
        let recipe = try Recipe.load(recipePath)
        // A line while the catalog downloads, and its retries, as in a build.
        let catalogProgress = CatalogProgress(terminal: terminal)
        defer { catalogProgress.finish() }
        // Only what a plan prints is kept of the catalog (same checks, same errors).
        let plan = try BuildPlan.preview(recipe: recipe, cache: cache)
        catalogProgress.finish()
        ProcessLifetime.keep(plan)
        for warning in RecipeWarnings.excludesOutsideIncludes(recipe: recipe, plan: plan) { terminal.note("warning: \(warning)") }
        let over = plan.capacityOvershoot
        if terminal.json {
            let selected = plan.selection.regions.enumerated().map { index, entry in
                PlanRecord.Region(
                    id: entry.id.rawValue, name: plan.selectedRegion(index).name, broughtBy: entry.broughtBy.rawValue,
                    sizeOnDiskInBytes: plan.selectedRegionSizes.map { $0[index] }, downloadBytes: plan.selectedRegionDownloadSizes[index])
            }
            terminal.record(
                PlanRecord(
                    recipe: recipe.name, catalog: plan.catalogName, mapVersion: plan.mapVersion.rawValue,
                    blockSize: recipe.blockSize, downloadBytes: plan.downloadBytes, totalBundleBytes: plan.totalBundleBytes,
                    storeBundleBytes: plan.storeBundleBytes, cacheSeedBundleBytes: plan.seedBundleBytes, bundles: plan.bundles.count,
                    bundlesCached: plan.bundles.count { $0.cached }, sizeOnDiskInBytes: plan.sizeOnDisk, cacheSeedBytes: plan.cacheSeedBytes,
                    capacity: recipe.capacity, fits: over == nil, overshootBytes: over, cache: cache.root, regions: selected,
                    bundleList: plan.bundles.map {
                        PlanRecord.Bundle(
                            digest: $0.digest.description, size: $0.size, cached: $0.cached, forStore: $0.forStore,
                            regions: $0.regions.map(\.rawValue))
                    }))
        } else {
            // One write for the whole table: a planet plan has thousands of rows.
            var out = TextBuffer()
            out.append(
                "plan for \(recipe.name): catalog \(plan.catalogName) \(plan.mapVersion), block size \(recipe.blockSize)\n")
            // Each id made visible once, for the column's width and its row.
            let ids = plan.selection.regions.map { $0.id.rawValue.visible }
            let width = ids.map(\.displayWidth).max() ?? 10
            for (index, entry) in plan.selection.regions.enumerated() {
                out.append("  ")
                out.append(ids[index], paddedTo: width, alignRight: false)
                out.append("  ")
                out.append(plan.selectedRegionSizes.map { ByteCount.format($0[index]) } ?? "?", paddedTo: 10, alignRight: true)
                out.append("  ")
                out.append(plan.selectedRegion(index).name.visible)
                if entry.broughtBy != entry.id {
                    out.append("  (via ")
                    out.append(entry.broughtBy.rawValue.visible)
                    out.append(")")
                }
                out.append("\n")
            }
            for (label, value) in PlanSummary.lines(plan, cache: cache.root) { out.append("\(label): \(value.visible)\n") }
            out.dropLastNewline()
            terminal.line(out.text)
        }
        // Written before the capacity check, so a plan that does not fit shows where the bytes go.
        try ReportFiles.write(SizeReport(plan: plan, cache: cache.root), arguments: arguments, terminal: terminal)
        try plan.checkCapacity()
        return .success
    }
}

extension String {
    /// Right-aligns to `width` terminal cells.
    func leftPadded(_ width: Int) -> String {
        let cells = displayWidth
        return cells >= width ? self : String(repeating: " ", count: width - cells) + self
    }
    /// Left-aligns to `width` terminal cells (cheaper than Foundation's `padding(toLength:)` for long tables).
    func rightPadded(_ width: Int) -> String {
        let cells = displayWidth
        return cells >= width ? self : self + String(repeating: " ", count: width - cells)
    }

    /// The terminal cells the text takes: from the bytes when every one is printable ASCII (one cell
    /// each; thousands of table rows need it), else per character: two for East Asian wide and
    /// full-width characters and emoji (CJK names), none for a zero-width one, one otherwise.
    var displayWidth: Int {
        let printableASCII = unsafe utf8.withContiguousStorageIfAvailable { bytes in unsafe bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F } }
        if printableASCII == true { return utf8.count }
        return reduce(0) { $0 + $1.terminalCells }
    }
}

extension Character {
    /// Cells a terminal gives this character (East Asian Width `W`/`F` and emoji: 2; zero-width: 0).
    /// An emoji drawn as a picture takes two, whether that is its default (`Emoji_Presentation`: 🚀,
    /// ⚡, a flag's pair of regional indicators) or asked for by U+FE0F (❤️, #️⃣), as UTS #51 says
    /// and grapheme-aware terminals draw it; a sequence joined by U+200D is one picture.
    var terminalCells: Int {
        guard let scalar = unicodeScalars.first else { return 0 }
        let first = scalar.value
        if first == 0x200B || first == 0x200C || first == 0x200D || first == 0xFEFF { return 0 }
        if scalar.properties.isEmojiPresentation || (scalar.properties.isEmoji && unicodeScalars.contains("\u{FE0F}")) { return 2 }
        let wide: [ClosedRange<UInt32>] = [
            0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x16FE0...0x16FE4, 0x17000...0x18CFF, 0x1B000...0x1B2FF, 0x1F300...0x1F64F, 0x1F900...0x1F9FF,
            0x20000...0x2FFFD, 0x30000...0x3FFFD,
        ]
        return wide.contains { $0.contains(first) } ? 2 : 1
    }
}

/// Text built as UTF-8 bytes: appending to one `String` costs hundreds of instructions a piece,
/// and a planet plan's table has tens of thousands of pieces.
private struct TextBuffer {
    private var bytes: [UInt8] = []

    mutating func append(_ text: String) {
        // Copied from contiguous UTF-8; appending `text.utf8` goes byte by byte.
        var text = text
        text.withUTF8 { unsafe bytes.append(contentsOf: $0) }
    }

    /// Appends `text` padded with spaces to `width` characters, on the left when `alignRight`.
    mutating func append(_ text: String, paddedTo width: Int, alignRight: Bool) {
        let padding = repeatElement(UInt8(ascii: " "), count: max(0, width - text.displayWidth))
        if alignRight { bytes.append(contentsOf: padding) }
        append(text)
        if !alignRight { bytes.append(contentsOf: padding) }
    }

    /// Drops a final line feed (`Terminal.line` adds one).
    mutating func dropLastNewline() {
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
    }

    var text: String { String(decoding: bytes, as: UTF8.self) }
}
