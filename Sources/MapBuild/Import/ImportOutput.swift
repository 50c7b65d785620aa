import Foundation
import MapFormat
import MapIO

/// The folders an import writes: staging, `source.json` composed from shard records, and
/// `mappack import --merge`.
enum ImportOutput {
    /// A staging folder (with `bundles/`) beside `output`, which it will replace. An existing
    /// `output` is replaced only when it is empty or an earlier import's (a `source.json` or
    /// `shard.json` in it), never another folder.
    static func stage(_ output: String) throws -> (area: StagingArea, name: String, parent: String) {
        let absolute = FileSystem.absolute(output)
        let parent = FileSystem.parent(absolute)
        let name = FileSystem.lastComponent(absolute)
        if FileSystem.exists(absolute) {
            let known = FileSystem.exists(absolute + "/source.json") || FileSystem.exists(absolute + "/" + ImportShardRecord.fileName)
            let empty = try FileSystem.isDirectory(absolute) && DirectoryWalker.entries(of: absolute).isEmpty
            guard FileSystem.isDirectory(absolute), known || empty else {
                throw ImportError.badShards(
                    reason: "--out \(output): exists and is not a source or shard folder; not replacing it (give a new folder)")
            }
        }
        try FileSystem.makeDirectories(parent)
        try StagingArea.sweepStale(in: parent, for: name)
        let area = try StagingArea(for: name, kind: .publish, in: parent).makeFolder("bundles")
        FileSystem.spreadSubfolders(area.path + "/bundles")
        return (area, name, parent)
    }

    /// Sorted-key, indented JSON with a final newline: readable, and the same bytes for the same value.
    static func encode<T: Encodable>(_ value: T) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return try encoder.encode(value) + Data("\n".utf8)
    }

    /// Writes `folder/source.json` from the records of every shard (one record for an unsharded
    /// import): the regions in the boundaries' order, each listing the bundles that name it, by name
    /// (once, however many shards wrote pieces of a bundle).
    static func compose(_ records: [ImportShardRecord], into folder: String) throws {
        let first = records[0]
        var bundles: [String: SourceWorld.Bundle] = [:]
        var listed: [RegionID: Set<String>] = [:]
        for record in records {
            for (name, bundle) in record.bundles {
                bundles[name] = SourceWorld.Bundle(kind: bundle.kind)
                for region in bundle.regions { listed[region, default: []].insert(name) }
            }
        }
        var regions = first.regions
        for index in regions.indices { regions[index].bundles = (listed[regions[index].id] ?? []).sorted() }
        let world = SourceWorld(
            format: SourceWorld.formatTag.description, catalog: first.catalog, mapVersion: first.mapVersion, released: first.released,
            supportedUntil: nil,
            regions: regions, bundles: bundles, changed: nil)
        try FileSystem.writeAtomically(try encode(world), to: folder + "/source.json")
        try FileSystem.syncTree(folder)
    }

    /// `mappack import --merge SHARD... --out DIR`: checks that the shards are all N of one import,
    /// copies their bundle folders (a bundle that several shards wrote pieces of, their tiles joined:
    /// `ImportDatabases.joinPieces`) and writes `source.json`; the bytes equal an unsharded import's.
    static func merge(shards: [String], output: String) throws -> TileImporter.Result {
        var records: [(folder: String, record: ImportShardRecord)] = []
        for folder in shards {
            let file = folder + "/" + ImportShardRecord.fileName
            let data: Data
            do { data = try ReadableFile.contents(of: file, limit: 1 << 30) } catch {
                throw ImportError.badShards(
                    reason:
                        "\(folder): not an import shard (no readable \(ImportShardRecord.fileName): \(error)); make shards with mappack import --shard I/N"
                )
            }
            let record = try CanonicalJSON.decode(ImportShardRecord.self, from: data, file: file)
            do { try FormatTagError.check(record.format, expected: ImportShardRecord.formatTag) } catch {
                throw ImportError.badShards(reason: "\(file): \(error)")
            }
            // Bundle names become folder names under the shard and the output: one plain name each.
            for name in record.bundles.keys.sorted() {
                if let problem = PathName.problem(name) {
                    throw ImportError.badShards(
                        reason: "\(file): bundle '\(name)' \(problem); \(PathName.rule); make the shards again with mappack import --shard I/N")
                }
            }
            records.append((folder, record))
        }
        guard let first = records.first?.record else { throw ImportError.badShards(reason: "--merge needs the shard folders") }
        for (folder, record) in records where record.inputs != first.inputs || record.shards != first.shards {
            throw ImportError.badShards(
                reason:
                    "\(folder): shard \(record.shard)/\(record.shards) comes from other inputs or options than \(records[0].folder); merge the shards of one import"
            )
        }
        let indexes = records.map(\.record.shard).sorted()
        guard indexes == Array(1...first.shards) else {
            let missing = Set(1...first.shards).subtracting(indexes).sorted().map(String.init).joined(separator: ", ")
            throw ImportError.badShards(
                reason: "--merge got shards \(indexes.map(String.init).joined(separator: ", ")) of \(first.shards)"
                    + (missing.isEmpty ? "; each shard once" : "; missing \(missing)"))
        }
        // The shards in order: their runs of tiles follow one another.
        records.sort { $0.record.shard < $1.record.shard }
        var writers: [String: [String]] = [:]
        for (folder, record) in records { for bundle in record.bundles.keys { writers[bundle, default: []].append(folder) } }
        let (area, name, _) = try stage(output)
        do {
            for (bundle, folders) in writers.sorted(by: { $0.key < $1.key }) {
                if folders.count == 1 {
                    try copyTree(folders[0] + "/bundles/" + bundle, to: area.path + "/bundles/" + bundle)
                    continue
                }
                let file = try pieceFile(folders[0] + "/bundles/" + bundle)
                guard records.first(where: { $0.folder == folders[0] })?.record.bundles[bundle]?.kind != TileImporter.Kind.search else {
                    throw ImportError.badShards(
                        reason: "\(bundle): written by several shards (\(folders.joined(separator: ", "))); merge the shards of one import")
                }
                try ImportDatabases.joinPieces(
                    folders.map { $0 + "/bundles/" + bundle + "/" + file }, into: area.path + "/bundles/" + bundle + "/" + file,
                    scratch: area.path + "/.pieces.sqlite")
            }
            try compose(records.map(\.record), into: area.path)
            try area.commit(as: name)
        } catch {
            area.discard()
            throw error
        }
        let counts = records.map(\.record.counts)
        return TileImporter.Result(
            output: FileSystem.absolute(output), regions: first.regions.count, bundles: writers.count,
            tiles: first.counts.tiles, placed: counts.reduce(0) { $0 + $1.placed }, outside: counts.reduce(0) { $0 + $1.outside },
            places: counts.reduce(0) { $0 + $1.places })
    }

    /// The one file of a bundle folder a shard wrote a piece of (`regions/ID/tiles.db`, …), relative to it.
    private static func pieceFile(_ folder: String) throws -> String {
        let files = try DirectoryWalker.walk(folder).filter { !$0.isDirectory }
        guard files.count == 1, files[0].isRegular else {
            throw ImportError.badShards(reason: "\(folder): a piece of a bundle holds one file, not \(files.count); make the shards again")
        }
        return files[0].relativePath
    }

    /// Copies the regular files and folders under `source` to `target`.
    private static func copyTree(_ source: String, to target: String) throws {
        try FileSystem.makeDirectories(target)
        for entry in try DirectoryWalker.walk(source) {
            let path = target + "/" + entry.relativePath
            if entry.isDirectory {
                try FileSystem.makeDirectories(path)
            } else if entry.isRegular {
                try FileSystem.makeDirectories(FileSystem.parent(path))
                try FileSystem.copyFile(source + "/" + entry.relativePath, to: path, sync: false)
            } else {
                throw ImportError.badShards(
                    reason: "\(source)/\(entry.relativePath): not a regular file or folder; a shard holds only what import wrote")
            }
        }
    }
}
