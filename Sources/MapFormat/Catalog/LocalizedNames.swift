/// Picks a localized name: `de-CH → de → en → id`.
public enum LocalizedNames {
    /// The best name in `names` for `language`, falling back to English, then to `fallback`.
    public static func pick(_ names: [String: String], language: String?, fallback: String) -> String {
        if var tag = language {
            while true {
                if let name = names[tag] { return name }
                guard let dash = tag.lastIndex(where: { $0 == "-" || $0 == "_" }) else { break }
                tag = String(tag[..<dash])
            }
        }
        return names["en"] ?? fallback
    }
}

extension CatalogRegion {
    /// The region's name in `language` with the usual fallbacks.
    public func name(in language: String?) -> String {
        LocalizedNames.pick(names, language: language, fallback: id.rawValue)
    }
}
