import Foundation
import MapFetch
import MapFormat
import MapIO

extension ImageBuilder {
    /// Folder name of shard `index` of `count`.
    func shardName(_ index: Int, of count: Int) -> String { "\(imageName).shard-\(index)-of-\(count)" }

    /// Fetches and unpacks this runner's share of the bundles (`--shard index/count`) into
    /// `<name>-<mapVersion>.shard-I-of-N/` for `mappack merge`. Returns the shard's path.
    package func runShard(_ index: Int, of count: Int, events: @escaping @Sendable (BuildEvent) -> Void) async throws -> String {
        do { try plan.checkCapacity() } catch { throw BuildError.plan(error) }
        let area = try prepareStaging(.shard(index: index, count: count))
        let staging = area.path
        let root = area.folder
        do {
            let mine = ShardAssignment.bundles(plan.bundles, index: index, count: count)
            let unpacked = try await produce(
                mine, store: area.imageFolder + "/" + ImageManifest.storeFolder, seedScratch: staging + "/seed", events: events)
            try FileSystem.rename(area.imageFolder + "/" + ImageManifest.storeFolder, to: staging + "/store")
            try FileSystem.removeTree(area.imageFolder)
            let record = ShardRecord(
                format: ShardRecord.formatTag.description, index: index, count: count, recipeName: plan.recipe.name,
                recipeSHA256: SHA256.digest(plan.recipe.source), catalogSHA256: plan.catalogSHA256,
                mapVersion: plan.tree.catalog.mapVersion, mappackVersion: MappackVersion.current,
                built: try ImageBuilder.buildTime(epoch: options.sourceDateEpoch, plan: plan),
                bundles: try mine.sorted { $0.digest < $1.digest }.map { bundle in
                    ShardRecord.Bundle(
                        digest: bundle.digest, forStore: bundle.forStore,
                        files: try unpacked[bundle.digest]!.files().map { ShardRecord.File(path: $0.path.string, size: $0.size, sha256: $0.sha256) })
                })
            try FileSystem.writeAtomically(plan.recipe.source, to: staging + "/recipe.yaml")
            guard let catalogBytes = plan.catalogBytes else {
                throw BuildError.output("a shard needs the catalog's bytes: plan it with keepCatalogBytes")
            }
            try FileSystem.writeAtomically(catalogBytes, to: staging + "/catalog.json")
            try FileSystem.writeAtomically(try CanonicalJSON.encode(record), to: staging + "/" + ShardRecord.fileName)
            TestPause.reach(.publish)
            try options.gate.enterPublishing()
            try ImageBuilder.replace(shardName(index, of: count), with: nil, of: area)
            try FileSystem.syncDirectory(root)
            Trash.waitForRemovals(in: root)
            return root + "/" + shardName(index, of: count)
        } catch {
            area.throwAway()
            // A full disk is said as a build says it (the download cache, the shard's files).
            throw BuildError.diskFull(from: error) ?? error
        }
    }

    /// Assembles an image from all shards of one build; bit-identical to a single-runner build.
    package static func merge(shards: [String], options: BuildOptions, events: @escaping @Sendable (BuildEvent) -> Void) async throws -> BuildReport {
        var records: [(path: String, record: ShardRecord)] = []
        for path in shards {
            let file = path + "/" + ShardRecord.fileName
            let data: Data
            do { data = try ReadableFile.contents(of: file, limit: 512 << 20) } catch {
                throw MergeError.notAShard(path: path, reason: error.description)
            }
            let record: ShardRecord
            do { record = try CanonicalJSON.decode(ShardRecord.self, from: data, file: file) } catch {
                throw MergeError.notAShard(path: path, reason: "\(error)")
            }
            do { try FormatTagError.check(record.format, expected: ShardRecord.formatTag) } catch {
                throw MergeError.notAShard(path: path, reason: error.description)
            }
            // Paths are joined to the shard's and the staging folder: a record must not reach outside either.
            for bundle in record.bundles {
                for file in bundle.files {
                    if let reason = StorePath.problem(file.path) {
                        throw MergeError.notAShard(
                            path: path, reason: "\(ShardRecord.fileName) lists file '\(file.path)' of bundle \(bundle.digest): \(reason)")
                    }
                }
            }
            records.append((path, record))
        }
        guard let first = records.first else { throw MergeError.notAShard(path: "(none)", reason: "give the shard folders to merge") }
        for (path, record) in records.dropFirst() {
            let checks: [(String, String, String)] = [
                (
                    "recipe", first.record.recipeName + " " + first.record.recipeSHA256.hex.prefix(12),
                    record.recipeName + " " + record.recipeSHA256.hex.prefix(12)
                ),
                ("catalog sha256", first.record.catalogSHA256.hex, record.catalogSHA256.hex),
                ("mappack version", first.record.mappackVersion, record.mappackVersion),
                ("shard count", String(first.record.count), String(record.count)),
                ("build time", first.record.built, record.built),
            ]
            for (field, expected, found) in checks where expected != found {
                throw MergeError.mismatch(path: path, field: field, expected: expected, found: found)
            }
        }
        if first.record.mappackVersion != MappackVersion.current {
            throw MergeError.mismatch(
                path: first.path, field: "mappack version", expected: MappackVersion.current, found: first.record.mappackVersion)
        }
        let count = first.record.count
        for index in 1...count {
            let matches = records.filter { $0.record.index == index }
            if matches.isEmpty { throw MergeError.missingShard(index: index, count: count) }
            if matches.count > 1 { throw MergeError.duplicateShard(index: index, paths: matches.map(\.path)) }
        }

        // Replay the plan from the exact recipe and catalog the shards were built from.
        var recipe = try Recipe.parse(
            try ReadableFile.contents(of: first.path + "/recipe.yaml", limit: Recipe.maxFileBytes), file: first.path + "/recipe.yaml")
        recipe.catalogURL = URL(fileURLWithPath: FileSystem.absolute(first.path + "/catalog.json"))
        let plan = try BuildPlan.make(recipe: recipe, cache: options.cache)
        let builder = ImageBuilder(plan: plan, options: options)
        let owner = Dictionary(
            records.flatMap { entry in entry.record.bundles.map { ($0.digest, (entry.path, $0)) } }, uniquingKeysWith: { a, _ in a })
        let missing = plan.bundles.map(\.digest).filter { owner[$0] == nil }
        if !missing.isEmpty { throw MergeError.incomplete(missing: missing) }

        let area = try builder.prepareStaging(.merge)
        let staging = area.path
        do {
            events(.phase(.merge))
            let store = area.imageFolder + "/" + ImageManifest.storeFolder
            let seedScratch = staging + "/seed"
            let work = plan.bundles.map { ($0, owner[$0.digest]!) }
            let copied = try await BlockingWork.map(work, width: options.jobs) { item -> UnpackedBundle in
                let (bundle, (path, record)) = item
                let from = bundle.forStore ? path + "/store" : path + "/seed/" + bundle.digest.hex
                let to = bundle.forStore ? store : seedScratch + "/" + bundle.digest.hex
                var files: [ExtractedFile] = []
                for file in record.files {
                    try FileSystem.makeDirectories(FileSystem.parent(to + "/" + file.path))
                    let digest: SHA256Digest
                    let size: Int64
                    do { (digest, size) = try SHA256.copyFile(from + "/" + file.path, to: to + "/" + file.path) } catch let error as FileError
                        where error.code == ELOOP
                    {
                        // A link where a shard's file belongs: never copied through.
                        throw MergeError.damaged(path: path, file: file.path)
                    }
                    guard digest == file.sha256, size == file.size else { throw MergeError.damaged(path: path, file: file.path) }
                    // Checked against the store-path rule when the record was read.
                    files.append(ExtractedFile(path: StorePath(alreadyChecked: file.path), size: size, sha256: digest))
                }
                return try UnpackedBundle(digest: bundle.digest, files: files, blockSize: builder.plan.recipe.blockSize, spill: nil)
            }
            var unpacked = UnpackedBundles(capacity: copied.count)
            for bundle in copied { unpacked.insert(bundle) }
            let report = try builder.finish(staging: area, unpacked: unpacked, built: first.record.built, events: events)
            Trash.waitForRemovals(in: area.folder)
            return report
        } catch {
            area.throwAway()
            // A full disk is said as a build says it (the shards' files copied, the outputs).
            throw BuildError.diskFull(from: error) ?? error
        }
    }
}
