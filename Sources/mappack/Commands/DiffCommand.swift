import Foundation
import MapBuild
import MapFormat

/// `mappack diff OLD NEW`: regions and bundles between two images or catalogs, and what a device downloads.
enum DiffCommand {
    static func run(_ raw: [String], terminal: Terminal) throws -> ExitCode {
        let arguments = try Arguments(raw, verb: Verbs.diff)
        let paths = try arguments.expect(["old", "new"])
        let old = try DiffSide.load(paths[0])
        let new = try DiffSide.load(paths[1])
        let (changes, unchanged) = RegionChange.between(old: old, new: new)
        let oldBundles = Set(old.bundleSizes.keys)
        let newBundles = Set(new.bundleSizes.keys)
        let kept = oldBundles.intersection(newBundles).sorted()
        let addedBundles = newBundles.subtracting(oldBundles).sorted()
        let dropped = oldBundles.subtracting(newBundles).sorted()
        let download = new.bytes(of: addedBundles)
        let bundleLine = "\(kept.count) kept, \(addedBundles.count) added, \(dropped.count) dropped"
        if terminal.json {
            func ids(_ change: RegionChange.Change) -> [String] { changes.filter { $0.change == change }.map(\.id) }
            terminal.record(
                DiffRecord(
                    from: old.mapVersion.rawValue, to: new.mapVersion.rawValue, old: old.label, new: new.label, regionsAdded: ids(.added),
                    regionsRemoved: ids(.removed), regionsChanged: ids(.changed), regionsUnchanged: unchanged, changes: changes,
                    bundlesKept: kept.map(\.description), bundlesAdded: addedBundles.map(\.description),
                    bundlesDropped: dropped.map(\.description), downloadBytes: download))
        } else {
            // Which two things, then what changed in them, then the bundles behind it.
            terminal.line("old: \(old.label.text)")
            terminal.line("new: \(new.label.text)")
            terminal.line("regions: \(RegionChange.counts(changes, unchanged: unchanged)) (not listed)")
            if !changes.isEmpty {
                var table = TextTable([("CHANGE", .left), ("REGION", .left), ("NAME", .left), ("BUNDLES", .right), ("BYTES", .right)])
                for change in changes { table.add([change.change.rawValue, change.id, change.name, change.bundlesText, change.bytesText]) }
                terminal.line(table.text)
            }
            terminal.line("bundles: \(bundleLine)")
            terminal.line("a device downloads \(ByteCount.format(download)) (\(download) bytes) to go from old to new")
        }
        try ReportFiles.write(
            SizeReport(
                old: old, new: new, changes: changes, unchanged: unchanged, addedBundles: Set(addedBundles), bundleLine: bundleLine,
                download: download),
            arguments: arguments, terminal: terminal)
        return .success
    }
}
