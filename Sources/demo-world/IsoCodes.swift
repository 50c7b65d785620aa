import Foundation
import MapIO

/// Countries and subdivisions from Debian's iso-codes (`iso_3166-1.json`, `iso_3166-2.json`),
/// with their names translated by the package's gettext catalogs.
struct IsoCodes: Sendable {
    /// One ISO 3166-1 country.
    struct Country: Sendable {
        /// Upper-case alpha-2 code, e.g. `CH`.
        let alpha2: String
        /// English short name, which is also the gettext msgid.
        let name: String
    }

    /// One ISO 3166-2 subdivision.
    struct Subdivision: Sendable {
        /// Full code, e.g. `FR-01`.
        let code: String
        /// English name, which is also the gettext msgid.
        let name: String
        /// Full code of the parent subdivision (`FR-ARA`), nil when the country is the parent.
        let parent: String?

        /// The country's alpha-2 code (the part before the dash).
        var country: String { String(code.prefix { $0 != "-" }) }
        /// The part after the dash, e.g. `01`.
        var suffix: String { String(code.drop { $0 != "-" }.dropFirst()) }
    }

    /// Languages whose translations go into region names, keyed by the name used in the source
    /// (BCP 47-style) with the locale folder they come from. Chinese uses the simplified catalog.
    static let languages: [(code: String, locale: String)] = [
        ("de", "de"), ("es", "es"), ("fr", "fr"), ("it", "it"), ("ja", "ja"),
        ("ko", "ko"), ("nl", "nl"), ("pl", "pl"), ("ru", "ru"), ("zh", "zh_CN"),
    ]

    /// All countries, in file order.
    let countries: [Country]
    /// All subdivisions, in file order.
    let subdivisions: [Subdivision]
    /// `iso_3166-1` translations per language code.
    let countryNames: [String: GettextCatalog]
    /// `iso_3166-2` translations per language code.
    let subdivisionNames: [String: GettextCatalog]

    /// Loads the JSON files under `root` (normally `/usr/share/iso-codes/json`) and the `.mo` files
    /// under `locales` (normally `/usr/share/locale`); a missing translation file just drops that language.
    init(root: String = "/usr/share/iso-codes/json", locales: String = "/usr/share/locale") throws(DemoWorldError) {
        let countryRows = try IsoCodes.rows(path: root + "/iso_3166-1.json", key: "3166-1")
        countries = try countryRows.map { row throws(DemoWorldError) in
            guard let alpha2 = row["alpha_2"], let name = row["name"] else {
                throw DemoWorldError.badIsoCodes(path: root + "/iso_3166-1.json", reason: "entry without alpha_2 or name: \(row)")
            }
            return Country(alpha2: alpha2, name: name)
        }
        let subdivisionRows = try IsoCodes.rows(path: root + "/iso_3166-2.json", key: "3166-2")
        subdivisions = try subdivisionRows.map { row throws(DemoWorldError) in
            guard let code = row["code"], code.contains("-"), let name = row["name"] else {
                throw DemoWorldError.badIsoCodes(path: root + "/iso_3166-2.json", reason: "entry without code or name: \(row)")
            }
            // iso-codes writes `parent` either as a bare suffix (`ARA`) or as a full code (`GB-SCT`).
            let parent = row["parent"].map { $0.contains("-") ? $0 : code.prefix { $0 != "-" } + "-" + $0 }
            return Subdivision(code: code, name: name, parent: parent)
        }
        var countryNames: [String: GettextCatalog] = [:]
        var subdivisionNames: [String: GettextCatalog] = [:]
        for (language, locale) in IsoCodes.languages {
            let folder = "\(locales)/\(locale)/LC_MESSAGES"
            if FileSystem.exists(folder + "/iso_3166-1.mo") { countryNames[language] = try GettextCatalog(path: folder + "/iso_3166-1.mo") }
            if FileSystem.exists(folder + "/iso_3166-2.mo") { subdivisionNames[language] = try GettextCatalog(path: folder + "/iso_3166-2.mo") }
        }
        self.countryNames = countryNames
        self.subdivisionNames = subdivisionNames
    }

    /// Names of a country keyed by language: English plus every translation that differs from it
    /// (an equal one adds nothing, since lookups fall back to `en`).
    func names(of country: Country) -> [String: String] { IsoCodes.localized(country.name, countryNames) }

    /// Names of a subdivision keyed by language, as for countries.
    func names(of subdivision: Subdivision) -> [String: String] { IsoCodes.localized(subdivision.name, subdivisionNames) }

    private static func localized(_ english: String, _ catalogs: [String: GettextCatalog]) -> [String: String] {
        var names = ["en": english]
        for (language, catalog) in catalogs {
            if let translated = catalog[english], translated != english { names[language] = translated }
        }
        return names
    }

    /// The string fields of each entry in the file's top-level array `key`.
    private static func rows(path: String, key: String) throws(DemoWorldError) -> [[String: String]] {
        let data: Data
        do { data = try ReadableFile.contents(of: path, limit: 64 << 20) } catch {
            throw DemoWorldError.badIsoCodes(path: path, reason: error.description)
        }
        let document: [String: [[String: String]]]
        do { document = try JSONDecoder().decode([String: [[String: String]]].self, from: data) } catch {
            throw DemoWorldError.badIsoCodes(path: path, reason: "not the expected iso-codes JSON (\(error))")
        }
        guard let rows = document[key] else {
            throw DemoWorldError.badIsoCodes(path: path, reason: "no top-level \"\(key)\" array")
        }
        return rows
    }
}
