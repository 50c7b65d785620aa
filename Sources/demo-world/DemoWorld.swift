import Dispatch
import Foundation
import MapFormat
import MapIO
import Synchronization

/// `demo-world`: writes a region source folder (`source.json` + `bundles/`) for `mappack publish`.
///
/// The layout is the contract with the publisher: `DIR/source.json` (`mappack-source/1`, canonical JSON)
/// and `DIR/bundles/<bundle name>/<store-relative tree>`, where no two bundles share a path:
/// a leaf `R` has `regions/R/tiles.db`, `regions/R/search.db` and `regions/R/routing/<a>/<b>/<n>.rt`;
/// a region with children has `regions/R/overview.db`; `world` has `overview/world/…`; and a bundle
/// shared by two sibling leaves `P/a` and `P/b` has `borders/P/a-b/tiles.db`.
///
/// Versions: a world generated with `--base-version B --map-version V` reuses B's bytes for every
/// bundle not listed in `changed`, so B must be a world whose own content was seeded by B (one
/// generated without `--base-version`); chains V1 → V2 → V3 should all use V1 as the base.
@main
struct DemoWorld {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        do {
            switch try WorldOptions.parse(arguments) {
            case .help:
                print(WorldOptions.usage)
            case .write(let options):
                try run(options)
            }
        } catch {
            FileHandle.standardError.write(Data("demo-world: \(error)\n".utf8))
            exit(error.exitCode)
        }
    }

    /// Plans the world, writes it into a staging folder beside `--out`, then swaps it into place.
    private static func run(_ options: WorldOptions) throws(DemoWorldError) {
        let started = ContinuousClock.now
        let output = FileSystem.absolute(options.output).trimmingSuffix("/")
        let name = (output as NSString).lastPathComponent
        guard output != "/", name != ".", name != ".." else {
            throw DemoWorldError.usage("--out \(options.output): name the world's own folder, e.g. --out Output/demo-world")
        }
        if let status = try wrap({ () throws(FileError) in try FileSystem.status(output) }), !status.isDirectory {
            throw DemoWorldError.outputNotDirectory(path: options.output)
        }
        let tree = try WorldTree(isoCodes: try IsoCodes(), options: options)

        // Build beside the target so the final rename stays on one filesystem, and so a killed run
        // leaves only a hidden `.NAME.staging-PID` folder, never a half-written world under the real
        // name; what killed runs left is removed first (a concurrent run's folders are kept).
        let area = StagingArea(for: name, kind: .staging, in: FileSystem.parent(output))
        let staging = area.path
        try wrap { () throws(FileError) in
            try StagingArea.sweepStale(in: area.folder, for: name)
            try area.makeFolder("bundles")
        }
        do throws(DemoWorldError) {
            try writeBundles(
                tree.bundles,
                writer: PayloadWriter(
                    bundlesRoot: staging + "/bundles", seed: options.seed, scale: options.scale, smallFiles: options.smallFiles ?? options.scale))
            let json: Data
            do { json = try CanonicalJSON.encode(SourceDocument(tree: tree, options: options)) } catch {
                throw DemoWorldError.bundle(name: "source.json", reason: "\(error)")
            }
            try wrap { () throws(FileError) in try FileSystem.writeAtomically(json + Data("\n".utf8), to: staging + "/source.json") }
            // An existing world is renamed aside first, so at every instant `output` is either the
            // complete old world or the complete new one.
            try wrap { () throws(FileError) in try area.commit(as: name) }
        } catch {
            area.discard()
            throw error
        }

        let entries = try wrap { () throws(FileError) in try DirectoryWalker.walk(output) }
        let files = entries.filter(\.isRegular)
        let bytes = files.reduce(Int64(0)) { $0 + $1.size }
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        print(
            "demo-world: \(options.output): \(tree.regions.count) regions (\(tree.leafCount) leaves), "
                + "\(tree.bundles.count) bundles (\(tree.changed.count) changed), \(files.count) files, \(bytes) bytes, "
                + String(format: "%.2f s", seconds))
    }

    /// Writes every bundle, as many at a time as there are cores; the first failure is reported.
    /// Dispatch threads, not the cooperative pool, because SQLite and file writes block.
    private static func writeBundles(_ bundles: [BundlePlan], writer: PayloadWriter) throws(DemoWorldError) {
        let failure = Mutex<DemoWorldError?>(nil)
        DispatchQueue.concurrentPerform(iterations: bundles.count) { index in
            if failure.withLock({ $0 != nil }) { return }
            do throws(DemoWorldError) {
                try writer.write(bundles[index])
            } catch {
                failure.withLock { if $0 == nil { $0 = error } }
            }
        }
        if let error = failure.withLock({ $0 }) { throw error }
    }

    private static func wrap<T>(_ body: () throws(FileError) -> T) throws(DemoWorldError) -> T {
        do { return try body() } catch { throw DemoWorldError.file(error) }
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        var text = self
        while text.count > 1, text.hasSuffix(suffix) { text.removeLast(suffix.count) }
        return text
    }
}
