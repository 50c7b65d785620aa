extension Verbs {
    /// `mappack store VERB`: each store verb a command of its own, with the options it reads; the
    /// options every store verb takes (`everyVerb`) besides.
    enum Store {
        static let storage = VerbSpec.Option("storage", value: "DIR", "The device's persistent map storage", completion: .directory, required: true)
        static let cache = VerbSpec.Option("cache", value: "DIR", "The device's map cache", completion: .directory, required: true)
        /// `--storage`, `--cache` and `--trust` (images and catalogs must be signed by it).
        static let everyVerb = [storage, cache, Verbs.trust]

        static let image = VerbSpec.Option("image", value: "PATH", "A preinstall image (folder or .tar.zst)", completion: .file)
        static let installImage = VerbSpec.Option(
            "image", value: "PATH", "A preinstall image (folder or .tar.zst)", completion: .file, required: true)
        static let full = VerbSpec.Option("full", "Hash every file")
        static let quick = VerbSpec.Option("quick", "Skip hashing")
        static let inPlace = VerbSpec.Option("in-place", "Use the image folder where it lies (a mounted partition image): copy nothing")
        static let check = VerbSpec.Option("check", "Only report whether a newer version exists")
        static let all = VerbSpec.Option("all", "Every catalog of the store (with --check: report each)")
        static let to = VerbSpec.Option("to", value: "DIR", "The new storage folder", completion: .directory, required: true)
        static let catalog = VerbSpec.Option(
            "catalog", value: "URL|ID", "The catalog to update from or download with: a URL (or path), or the id of one of the store's catalogs")

        static let install = verb(
            "install", "",
            "first start: validate and install a preinstall image (with --trust every file is hashed; the image must be signed; "
                + "--trust PUBKEY with any verb: images and catalogs must be signed by it; --in-place: the image folder stays the store's "
                + "read-only base, only changes are written to the storage)", [installImage, full, inPlace])
        static let status = verb(
            "status", "",
            "the storage's status: its state, then every installed file's presence and size (with --full also SHA-256 and the signature)",
            [image, full, inPlace])
        static let repair = verb(
            "repair", "",
            "finish or roll back interrupted work, rebuild a lost state, restore the kept manifest and files "
                + "(from the image, validated first, the download cache or the catalog's server; --in-place: an install it starts "
                + "over uses the image in place)", [image, full, inPlace])
        static let regions = verb("regions", "", "installed regions", [Verbs.lang])
        static let delete = verb("delete", "ID...", "delete regions (and their installed descendants)", [])
        static let verify = verb("verify", "", "check the kept manifest (and its signature) and the installed files", [quick])
        static let cacheVerb = verb("cache", "size | clear | limit BYTES", "the map cache's size; empty it; cap it", [])
        static let move = verb("move", "", "move the persistent storage", [to])
        static let update = verb(
            "update", "", "update to the catalog's newer map version (--check: only report; --all: every catalog)", [catalog, check, all])
        static let download = verb("download", "ID...", "download more regions from the store's catalog", [catalog])
        static let available = verb("available", "", "catalog regions not installed", [Verbs.lang, catalog])
        static let version = verb("version", "", "one-line map version report (store and cache)", [])
        static let catalogs = verb(
            "catalogs", "[add URL | remove ID]",
            "the store's catalogs (id, map version, installed regions, update state, URL; the image's first); add one, or remove one none of whose regions is installed",
            [])

        /// Every store verb, from the commands that run them (`StoreCommand.verbs`).
        static var verbs: [VerbSpec] { StoreCommand.verbs.map(\.spec) }

        private static func verb(_ name: String, _ positionals: String, _ summary: String, _ options: [VerbSpec.Option]) -> VerbSpec {
            VerbSpec(name: name, parent: "store", positionals: positionals, summary: summary, options: options, inherited: everyVerb)
        }
    }
}
