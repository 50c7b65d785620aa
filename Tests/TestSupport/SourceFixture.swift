import Foundation

/// A small region source folder written by the tests: two roots (`world`, `europe`), a country
/// with two cantons that share a border bundle, a third level below one canton, and a second
/// country. Payload bytes are deterministic pseudo-random data of chosen sizes.
public enum SourceFixture {
    /// Bundle folder → (kind, files: store path → size).
    public static let bundles: [String: (kind: String, files: [String: Int])] = [
        "world": ("overview", ["overview/world/tiles.db": 7000, "overview/world/names.txt": 300]),
        "europe": ("overview", ["regions/europe/overview.db": 5000]),
        "ch": ("overview", ["regions/europe/ch/overview.db": 3000]),
        "ch.be": (
            "tiles", ["regions/europe/ch/be/tiles.db": 20000, "regions/europe/ch/be/routing/1/a.rt": 3, "regions/europe/ch/be/routing/1/empty.rt": 0]
        ),
        "ch.be.thun": ("tiles", ["regions/europe/ch/be/thun/tiles.db": 4097]),
        "ch.zh": ("tiles", ["regions/europe/ch/zh/tiles.db": 9000, "regions/europe/ch/zh/search.db": 1]),
        "border.be-zh": ("tiles", ["borders/be-zh/tiles.db": 100]),
        "li": ("tiles", ["regions/europe/li/tiles.db": 8192]),
    ]

    /// Writes the fixture under `folder` (created), returning its path.
    @discardableResult
    public static func write(to folder: String, mapVersion: String = "1.0", changed: Set<String> = []) throws -> String {
        let fm = FileManager.default
        try fm.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (name, bundle) in bundles {
            for (path, size) in bundle.files {
                let full = folder + "/bundles/" + name + "/" + path
                try fm.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                let seed = changed.contains(name) ? path + mapVersion : path
                try bytes(size, seed: seed).write(to: URL(fileURLWithPath: full))
            }
        }
        let source = """
            {"format":"mappack-source/1","catalog":"fixture","mapVersion":"\(mapVersion)","released":"2026-11-20T00:00:00Z",
             "regions":[
              {"id":"world","parent":null,"names":{"en":"World","de":"Welt"},"bundles":["world"]},
              {"id":"europe","parent":null,"names":{"en":"Europe","de":"Europa","fr":"Europe"},"bundles":["europe"]},
              {"id":"europe/ch","parent":"europe","names":{"en":"Switzerland","de":"Schweiz","fr":"Suisse"},"bundles":["ch"],"cities":["Bern","Zürich"]},
              {"id":"europe/ch/be","parent":"europe/ch","names":{"en":"Bern","de":"Bern"},"bundles":["ch.be","border.be-zh"]},
              {"id":"europe/ch/be/thun","parent":"europe/ch/be","names":{"en":"Thun"},"bundles":["ch.be.thun"]},
              {"id":"europe/ch/zh","parent":"europe/ch","names":{"en":"Zurich","de":"Zürich"},"bundles":["ch.zh","border.be-zh"]},
              {"id":"europe/li","parent":"europe","names":{"en":"Liechtenstein","fr":"Liechtenstein"},"bundles":["li"]}
             ],
             "bundles":{\(bundles.keys.sorted().map { "\"\($0)\":{\"kind\":\"\(bundles[$0]!.kind)\"}" }.joined(separator: ","))}}
            """
        try Data(source.utf8).write(to: URL(fileURLWithPath: folder + "/source.json"))
        return folder
    }

    /// `count` deterministic bytes derived from `seed` (half compressible, half noise).
    public static func bytes(_ count: Int, seed: String) -> Data {
        var state: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in seed.utf8 { state = (state ^ UInt64(byte)) &* 0x100_0000_01b3 }
        var out = Data(count: count)
        for i in 0..<count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            out[i] = i % 2 == 0 ? UInt8(truncatingIfNeeded: state >> 33) : UInt8(i % 7)
        }
        return out
    }

    /// A recipe text pointing at `catalog`.
    public static func recipe(
        catalog: String, include: [String] = ["europe/ch"], exclude: [String] = [], seed: [String] = ["world"],
        formats: String = "[directory, tar.zst]", extra: String = ""
    ) -> String {
        """
        name: fixture
        catalog: \(catalog)
        mapVersion: "1.0"
        language: de
        regions:
          include: [\(include.joined(separator: ", "))]
          exclude: [\(exclude.joined(separator: ", "))]
        cacheSeed:
          include: [\(seed.joined(separator: ", "))]
          maxBytes: 1 MiB
        target:
          blockSize: 4096
        output:
          formats: \(formats)
        \(extra)
        """
    }
}
