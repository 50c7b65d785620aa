/// Every verb of `mappack`, in the order `mappack help` lists them, and every option, declared once
/// as a value: a command asks its `Arguments` for `Verbs.Build.from`, not for a string, so a
/// misspelt or undeclared option does not compile.
enum Verbs {
    static let jobs = VerbSpec.Option("jobs", short: "j", value: "N", "Work on N things at once (transfers, files)")
    static let trust = VerbSpec.Option(
        "trust", value: "PUBKEY", "Require a signature by this public key (mappack keygen writes one)", completion: .file)
    static let sign = VerbSpec.Option("sign", value: "KEY", "Sign with this private key (mappack keygen)", completion: .file)
    static let lang = VerbSpec.Option("lang", value: "L", "Names in language L (falls back de-CH → de → en → id)")
    static let cache = VerbSpec.Option(
        "cache", value: "DIR", "Download cache (default $XDG_CACHE_HOME/mappack or ~/.cache/mappack)", completion: .directory)
    static let out = VerbSpec.Option("out", short: "o", value: "DIR", "Output folder (default ./Output)", completion: .directory)
    static let html = VerbSpec.Option("html", value: "FILE", "Also write a self-contained HTML report (treemap, region tree)", completion: .file)
    static let markdown = VerbSpec.Option(
        "markdown", value: "FILE", "Also append a Markdown summary to FILE (e.g. $GITHUB_STEP_SUMMARY; - for stdout)", completion: .file)

    /// `build`'s own options.
    enum Build {
        static let from = VerbSpec.Option(
            "from", value: "OLD_IMAGE", "Reuse the unpacked files of an earlier image for unchanged bundles", completion: .directory)
        static let remoteCache = VerbSpec.Option(
            "remote-cache", value: "URL", "A shared bundle cache (Bazel remote cache protocol) looked up before the origin")
        static let remoteCacheReadOnly = VerbSpec.Option("remote-cache-readonly", "Never upload to the remote cache")
        static let shard = VerbSpec.Option("shard", value: "I/N", "Fetch and unpack share I of N; assemble with mappack merge")
        static let force = VerbSpec.Option("force", "Rebuild even when nothing changed")
        static let sync = VerbSpec.Option("sync", "Make the outputs durable (fsync) before they are renamed into place")
        static let trust = VerbSpec.Option("trust", value: "PUBKEY", "The catalog must be signed by this key (catalog.json.sig)", completion: .file)
    }

    static let build = VerbSpec(
        name: "build", positionals: "RECIPE", summary: "build an image into ./Output (or --out)",
        options: [
            jobs, cache, out, sign, Build.from, Build.remoteCache, Build.remoteCacheReadOnly, Build.shard, Build.force, Build.sync, Build.trust,
        ], words: .recipes)
    static let merge = VerbSpec(
        name: "merge", positionals: "SHARD...", summary: "assemble an image from --shard outputs", options: [out, sign, jobs])
    static let plan = VerbSpec(
        name: "plan", positionals: "RECIPE", summary: "what a build would do, with exact sizes", options: [cache, html, markdown],
        words: .recipes)

    /// `regions`' own options.
    enum Regions {
        static let tree = VerbSpec.Option("tree", "Show the regions as a tree")
        static let filter = VerbSpec.Option("filter", value: "TEXT", "Only regions whose id or name contains TEXT")
        static let blockSize = VerbSpec.Option("block-size", value: "BYTES", "Sizes on disk for this file system block size")
    }

    static let regions = VerbSpec(
        name: "regions", positionals: "CATALOG", summary: "browse a catalog's region tree",
        options: [lang, Regions.tree, Regions.filter, Regions.blockSize])

    /// `verify`'s own options.
    enum Verify {
        static let quick = VerbSpec.Option("quick", "Check sizes and structure only, without hashing")
        static let full = VerbSpec.Option("full", "Hash every file (the default; kept for scripts)")
    }

    static let verify = VerbSpec(
        name: "verify", positionals: "PATH", summary: "check an image folder, .tar.zst, .erofs or installed store",
        options: [Verify.quick, Verify.full, jobs, trust])

    /// `serve`'s own options.
    enum Serve {
        static let port = VerbSpec.Option("port", short: "p", value: "N", "Listen on 127.0.0.1:N (default 8080; 0 for any free port)")
        static let cache = VerbSpec.Option(
            "cache", value: "DIR", "An installed store's map cache (store install --cache): its overview tiles", completion: .directory)
        static let maplibre = VerbSpec.Option(
            "maplibre-js", value: "DIR", "The folder with maplibre-gl.js and .css (default: the PyPI wheel maplibre in .venv)", completion: .directory
        )
        static let openURLFile = VerbSpec.Option("open-url-file", value: "FILE", "Also write the page's URL to FILE once serving", completion: .file)
    }

    static let serve = VerbSpec(
        name: "serve", positionals: "PATH", summary: "show an image, .tar.zst or installed store on http://127.0.0.1",
        options: [Serve.port, Serve.cache, Serve.maplibre, Serve.openURLFile])
    static let inspect = VerbSpec(name: "inspect", positionals: "IMAGE", summary: "what an image holds", options: [trust, lang, html, markdown])
    static let diff = VerbSpec(
        name: "diff", positionals: "OLD NEW", summary: "two images or catalogs: regions, bundles, bytes", options: [html, markdown])
    static let store = VerbSpec(
        name: "store", positionals: "VERB", summary: "drive MapStore as a device would (mappack store help)", options: Store.everyVerb,
        subcommands: Store.verbs, notes: "exit codes: 0 ok, 1 not ok or the work failed, 2 bad usage", words: .list(Store.verbs.map(\.name)))

    /// `keygen`'s own options.
    enum Keygen {
        static let out = VerbSpec.Option(
            "out", short: "o", value: "NAME", "Write NAME.key (private, 0600), NAME.pub and NAME.minisign.pub", completion: .file)
        static let from = VerbSpec.Option("from", value: "KEY", "Write only the public files again, from an existing private key", completion: .file)
        static let force = VerbSpec.Option("force", "Overwrite existing key files")
    }

    static let keygen = VerbSpec(
        name: "keygen", positionals: "", summary: "Ed25519 key pair for --sign / --trust", options: [Keygen.out, Keygen.from, Keygen.force])

    /// `publish`'s own options.
    enum Publish {
        static let catalogVersion = VerbSpec.Option("catalog-version", value: "N", "The signed catalog's version (default: one more than the last)")
        static let expires = VerbSpec.Option("expires", value: "DURATION", "The signature's lifetime, e.g. 36h or 14d (default 30d)")
        static let timestampExpires = VerbSpec.Option(
            "timestamp-expires", value: "DURATION", "catalog.json.timestamp's lifetime, e.g. 6h or 2d (default 1d, at most --expires)")
        static let nextKey = VerbSpec.Option("next-key", value: "PUBKEY", "Announce the key that signs the next catalogs", completion: .file)
        static let resetLineage = VerbSpec.Option(
            "reset-lineage", value: "NEWKEY",
            "Reset a version counter frozen too high: a new epoch, signed by --sign and cosigned by NEWKEY (the next key)", completion: .file)
        static let force = VerbSpec.Option("force", "Sign a --catalog-version far ahead of the clock, or over a damaged previous signature")
        static let chunked = VerbSpec.Option("chunked", "Also write every bundle as a .zck, for updates that fetch only changed chunks")
        static let previous = VerbSpec.Option(
            "previous", value: "DIR",
            "The previous version's published folder (or catalog.json): unchanged bundles are reused, not packed (default: --out's)",
            completion: .directory)
        /// The options that describe the signature, which need `--sign`.
        static let signing = [catalogVersion, expires, timestampExpires, nextKey, resetLineage]
    }

    static let publish = VerbSpec(
        name: "publish", positionals: "SOURCE_DIR", summary: "region source folders → catalog + bundles",
        options: [
            out, jobs, sign, Publish.catalogVersion, Publish.expires, Publish.timestampExpires, Publish.nextKey, Publish.resetLineage, Publish.force,
            Publish.chunked, Publish.previous,
        ])

    /// `import`'s own options.
    enum Import {
        static let tiles = VerbSpec.Option(
            "tiles", value: "TILESET", "The tileset to cut per region (MBTiles, or PMTiles v3: a file or an http(s):// URL read by range)",
            completion: .file)
        static let regions = VerbSpec.Option(
            "regions", value: "GEOJSON", "Region boundaries: Polygon features with id, parent, name", completion: .file)
        static let places = VerbSpec.Option(
            "places", value: "GEOJSON", "Places for the search databases: Point features with name", completion: .file)
        static let out = VerbSpec.Option(
            "out", short: "o", value: "DIR", "The source folder (or, with --shard, the shard folder) to write", completion: .directory)
        static let catalog = VerbSpec.Option("catalog", value: "ID", "The catalog's id (default imported)")
        static let mapVersion = VerbSpec.Option("map-version", value: "V", "The map version (default 1.0)")
        static let shard = VerbSpec.Option("shard", value: "I/N", "Write share I of N; assemble with mappack import --merge")
        static let overviewMaxZoom = VerbSpec.Option(
            "overview-maxzoom", value: "N|none", "Overviews (of parent and root regions) hold zooms 0-N (default 5); none: no overviews")
        static let merge = VerbSpec.Option("merge", "Assemble the --shard folders given as SHARD... into --out")
        /// The options a `--merge` takes from its shards instead.
        static let choices = [tiles, regions, places, shard, catalog, mapVersion, overviewMaxZoom]
    }

    static let `import` = VerbSpec(
        name: "import", positionals: "[SHARD...]", summary: "a tileset + region boundaries → a source folder",
        options: [
            Import.tiles, Import.regions, Import.places, Import.out, Import.catalog, Import.mapVersion, Import.shard, Import.overviewMaxZoom,
            Import.merge,
        ])
    static let completions = VerbSpec(
        name: "completions", positionals: "SHELL", summary: "shell completions: bash, zsh or fish", options: [], words: .list(Help.shells))

    /// `help`'s own option.
    static let man = VerbSpec.Option("man", "Print the man page (roff) instead")
    static let help = VerbSpec(name: "help", positionals: "[VERB]", summary: "this text, or one verb's options", options: [man], words: .verbs)

    /// Every verb, from the commands that run them (`Mappack.commands`): none is listed without one.
    static var all: [VerbSpec] { Mappack.commands.map { $0.spec } }

    /// The verb with this name, for `mappack help VERB` (and `help store VERB`).
    static func named(_ name: String) -> VerbSpec? { all.first { $0.name == name } }
}
