import MapFormat

/// The one name rule of MapStore's region listings, installed and offered alike (`regions(language:)`,
/// `availableRegions(language:)`, `regionDetails(_:language:)`), so a region is called the same before and
/// after its download: the language asked for (BCP 47: `de-CH`, then `de`), the image's language, the
/// region's own name (the manifest's, in the image's language), English, then the id.
enum RegionName {
    static func pick(names: [String: String], language: String?, imageLanguage: String?, ownName: String? = nil, id: RegionID) -> String {
        var tags = LocalizedNames.fallbacks(of: language)
        if let imageLanguage { tags.append(imageLanguage) }
        if let name = tags.lazy.compactMap({ names[$0] }).first(where: { !$0.isEmpty }) { return name }
        if let ownName, !ownName.isEmpty { return ownName }
        if let name = names["en"], !name.isEmpty { return name }
        return id.rawValue
    }
}
