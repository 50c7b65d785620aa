/// Every verb of `mappack`, in the order `mappack help` lists them.
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

    static let all: [VerbSpec] = [
        VerbSpec(
            name: "build", positionals: "RECIPE", summary: "build an image into ./Output (or --out)",
            options: [
                jobs, cache, out, sign,
                VerbSpec.Option(
                    "from", value: "OLD_IMAGE", "Reuse the unpacked files of an earlier image for unchanged bundles", completion: .directory),
                VerbSpec.Option("remote-cache", value: "URL", "A shared bundle cache (Bazel remote cache protocol) looked up before the origin"),
                VerbSpec.Option("remote-cache-readonly", "Never upload to the remote cache"),
                VerbSpec.Option("shard", value: "I/N", "Fetch and unpack share I of N; assemble with mappack merge"),
                VerbSpec.Option("force", "Rebuild even when nothing changed"),
                VerbSpec.Option("trust", value: "PUBKEY", "The catalog must be signed by this key (catalog.json.sig)", completion: .file),
            ]),
        VerbSpec(name: "merge", positionals: "SHARD...", summary: "assemble an image from --shard outputs", options: [out, sign, jobs]),
        VerbSpec(name: "plan", positionals: "RECIPE", summary: "what a build would do, with exact sizes", options: [cache, html, markdown]),
        VerbSpec(
            name: "regions", positionals: "CATALOG", summary: "browse a catalog's region tree",
            options: [
                lang, VerbSpec.Option("tree", "Show the regions as a tree"),
                VerbSpec.Option("filter", value: "TEXT", "Only regions whose id or name contains TEXT"),
                VerbSpec.Option("block-size", value: "BYTES", "Sizes on disk for this file system block size"),
            ]),
        VerbSpec(
            name: "verify", positionals: "PATH", summary: "check an image folder, .tar.zst or installed store",
            options: [
                VerbSpec.Option("quick", "Check sizes and structure only, without hashing"),
                VerbSpec.Option("full", "Hash every file (the default; kept for scripts)"), jobs, trust,
            ]),
        VerbSpec(
            name: "serve", positionals: "PATH", summary: "show an image, .tar.zst or installed store on http://127.0.0.1",
            options: [
                VerbSpec.Option("port", short: "p", value: "N", "Listen on 127.0.0.1:N (default 8080; 0 for any free port)"),
                VerbSpec.Option(
                    "cache", value: "DIR", "An installed store's map cache (store install --cache): its overview tiles", completion: .directory),
                VerbSpec.Option(
                    "maplibre-js", value: "DIR", "The folder with maplibre-gl.js and .css (default: the PyPI wheel maplibre in .venv)",
                    completion: .directory),
                VerbSpec.Option("open-url-file", value: "FILE", "Also write the page's URL to FILE once serving", completion: .file),
            ]),
        VerbSpec(name: "inspect", positionals: "IMAGE", summary: "what an image holds", options: [trust, lang, html, markdown]),
        VerbSpec(name: "diff", positionals: "OLD NEW", summary: "two images or catalogs: regions, bundles, bytes", options: [html, markdown]),
        VerbSpec(
            name: "store", positionals: "VERB", summary: "drive MapStore as a device would (mappack store help)",
            options: [
                VerbSpec.Option("storage", value: "DIR", "The device's persistent map storage", completion: .directory),
                VerbSpec.Option("cache", value: "DIR", "The device's map cache", completion: .directory),
                VerbSpec.Option("image", value: "PATH", "A preinstall image (folder or .tar.zst)", completion: .file),
                VerbSpec.Option("full", "Hash every file"), VerbSpec.Option("quick", "Skip hashing"),
                VerbSpec.Option("check", "update: only report whether a newer version exists"),
                lang, VerbSpec.Option("to", value: "DIR", "move: the new storage folder", completion: .directory), trust,
                VerbSpec.Option("catalog", value: "URL", "The catalog to update from or download with"),
            ], words: .list(StoreCommand.verbs)),
        VerbSpec(
            name: "keygen", positionals: "", summary: "Ed25519 key pair for --sign / --trust",
            options: [
                VerbSpec.Option(
                    "out", short: "o", value: "NAME", "Write NAME.key (private, 0600), NAME.pub and NAME.minisign.pub", completion: .file),
                VerbSpec.Option("from", value: "KEY", "Write only the public files again, from an existing private key", completion: .file),
                VerbSpec.Option("force", "Overwrite existing key files"),
            ]),
        VerbSpec(
            name: "publish", positionals: "SOURCE_DIR", summary: "region source folders → catalog + bundles",
            options: [
                out, jobs, sign,
                VerbSpec.Option("catalog-version", value: "N", "The signed catalog's version (default: one more than the last)"),
                VerbSpec.Option("expires", value: "DURATION", "The signature's lifetime, e.g. 36h or 14d (default 30d)"),
                VerbSpec.Option(
                    "timestamp-expires", value: "DURATION", "catalog.json.timestamp's lifetime, e.g. 6h or 2d (default 1d, at most --expires)"),
                VerbSpec.Option("next-key", value: "PUBKEY", "Announce the key that signs the next catalogs", completion: .file),
                VerbSpec.Option(
                    "reset-lineage", value: "NEWKEY",
                    "Reset a version counter frozen too high: a new epoch, signed by --sign and cosigned by NEWKEY (the next key)",
                    completion: .file),
                VerbSpec.Option("force", "Sign a --catalog-version far ahead of the clock, or over a damaged previous signature"),
                VerbSpec.Option("chunked", "Also write every bundle as a .zck, for updates that fetch only changed chunks"),
                VerbSpec.Option(
                    "previous", value: "DIR",
                    "The previous version's published folder (or catalog.json): unchanged bundles are copied, not packed (default: --out's)",
                    completion: .directory),
            ]),
        VerbSpec(
            name: "import", positionals: "[SHARD...]", summary: "a tileset + region boundaries → a source folder",
            options: [
                VerbSpec.Option("tiles", value: "TILESET", "The tileset to cut per region (MBTiles, or PMTiles v3)", completion: .file),
                VerbSpec.Option("regions", value: "GEOJSON", "Region boundaries: Polygon features with id, parent, name", completion: .file),
                VerbSpec.Option("places", value: "GEOJSON", "Places for the search databases: Point features with name", completion: .file),
                VerbSpec.Option(
                    "out", short: "o", value: "DIR", "The source folder (or, with --shard, the shard folder) to write", completion: .directory),
                VerbSpec.Option("catalog", value: "ID", "The catalog's id (default imported)"),
                VerbSpec.Option("map-version", value: "V", "The map version (default 1.0)"),
                VerbSpec.Option("shard", value: "I/N", "Write share I of N; assemble with mappack import --merge"),
                VerbSpec.Option("merge", "Assemble the --shard folders given as SHARD... into --out"),
            ]),
        VerbSpec(
            name: "completions", positionals: "SHELL", summary: "shell completions: bash, zsh or fish", options: [],
            words: .list(Help.shells)),
        VerbSpec(
            name: "help", positionals: "[VERB]", summary: "this text, or one verb's options",
            options: [
                VerbSpec.Option("man", "Print the man page (roff) instead")
            ], words: .verbs),
    ]

    /// The verb with this name.
    static func named(_ name: String) -> VerbSpec? { all.first { $0.name == name } }
}
