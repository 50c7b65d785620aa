/// The `"schema"` tag of every JSON line `mappack --json` prints: the name of its JSON Schema file
/// in `Schemas/` (`NAME.schema.json`) and the schema's version. A version grows only when a field is
/// removed or changes its type or meaning; new fields and new events keep it (readers ignore what
/// they do not know).
enum JSONSchemas {
    /// The event lines of verbs that report work as it goes; each line has an `event`.
    static let events = "mappack-events/1"
    static let plan = "mappack-plan/1"
    static let inspect = "mappack-inspect/1"
    static let diff = "mappack-diff/1"
    /// One line per region of `mappack regions`.
    static let region = "mappack-region/1"
    /// One line per region of `mappack store regions`.
    static let storeRegion = "mappack-store-region/1"
    static let storeAvailable = "mappack-store-available/1"
    static let storeVersion = "mappack-store-version/1"
    static let storeCache = "mappack-store-cache/1"
    static let storeCatalog = "mappack-store-catalog/1"
    static let updateCheck = "mappack-update-check/1"
    static let help = "mappack-help/1"
    static let completions = "mappack-completions/1"
    static let version = "mappack-version/1"
}
