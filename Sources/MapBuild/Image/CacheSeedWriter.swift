import Foundation
import MapFormat
import MapIO

/// Writes `cache-seed.sqlite` deterministically: entries inserted in a fixed order with
/// `accessed` = insertion rank, then `VACUUM INTO` for a compact file with stable bytes.
struct CacheSeedWriter {
    /// One candidate file for the seed.
    struct Candidate {
        let path: String
        let source: String
        let size: Int64
        let sha256: SHA256Digest
        let region: RegionID
        let priority: Int
        let depth: Int
    }

    let catalog: String
    let mapVersion: MapVersion
    let maxBytes: Int64?
    /// Each seed region's bundles in the catalog, recorded in `meta.bundles`.
    let regionBundles: [RegionID: [BundleDigest]]

    /// Writes the seed to `path` from `candidates`; returns its record for the manifest.
    func write(_ candidates: [Candidate], to path: String, scratch: String, regions: [RegionID]) throws -> ImageCacheSeed {
        let ordered = candidates.sorted { a, b in
            if a.priority != b.priority { return a.priority < b.priority }
            if a.depth != b.depth { return a.depth < b.depth }
            return a.path.utf8.lexicographicallyPrecedes(b.path.utf8)
        }
        let work = scratch + "/seed-work.sqlite"
        try FileSystem.removeFile(work)
        let db = try SQLiteDatabase(path: work)
        try db.execute("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA page_size=4096;")
        try db.execute(CacheSchema.create)
        var total: Int64 = 0
        var rank: Int64 = 0
        try db.execute("BEGIN")
        try db.executeMany(
            "INSERT INTO meta(key, value) VALUES (?, ?)",
            [
                [.text(CacheSchema.MetaKey.format.rawValue), .text(CacheSchema.formatTag.description)],
                [.text(CacheSchema.MetaKey.catalog.rawValue), .text(catalog)],
                [.text(CacheSchema.MetaKey.mapVersion.rawValue), .text(mapVersion.rawValue)],
                [.text(CacheSchema.MetaKey.bundles.rawValue), .text(CacheSchema.encodeBundles(regionBundles))],
            ])
        for candidate in ordered {
            // Between files: a signal stops a large seed here (the work file goes with the staging folder).
            try Task.checkCancellation()
            if let maxBytes, total + candidate.size > maxBytes { continue }
            let data = try ReadableFile.contents(of: candidate.source, limit: Int(candidate.size) + 1)
            rank += 1
            try db.query(
                "INSERT INTO entries(key, region, data, size, sha256, accessed) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    .text(candidate.path), .text(candidate.region.rawValue), .blob(data), .integer(candidate.size),
                    .blob(Data(candidate.sha256.bytes)), .integer(rank),
                ])
            total += candidate.size
        }
        try db.execute("COMMIT")
        try Task.checkCancellation()
        try FileSystem.removeFile(path)
        try db.execute("VACUUM INTO '\(path.replacingOccurrences(of: "'", with: "''"))'")
        try FileSystem.removeFile(work)
        let (digest, size) = try SHA256.digestOfFile(path)
        return ImageCacheSeed(sha256: digest, size: size, entries: Int(rank), regions: regions)
    }
}
