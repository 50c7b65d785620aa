/// The UN M49 geographic regions the demo world uses as its continent roots, and which one each
/// ISO 3166-1 country belongs to.
///
/// M49 has one "Americas" region (subdivided into Latin America and the Caribbean and Northern
/// America); the demo keeps it as one root, `americas`, so every country has exactly one continent
/// straight from the standard. Antarctica is not an M49 region; `AQ` gets its own root so that no
/// country is forced into a continent it does not belong to. Territories follow M49 (`BV` and `GS`
/// in the Americas, `HM`, `CC`, `CX` and `UM` in Oceania, `IO` and `TF` in Africa); `TW`, which M49
/// does not list, is placed in Eastern Asia as most atlases do.
enum M49 {
    /// One continent root: id, names in the demo's languages, and an approximate extent.
    struct Continent: Sendable {
        /// Region id, e.g. `europe`.
        let id: String
        /// Names keyed by language code.
        let names: [String: String]
        /// Approximate centre, `[lat, lon]`.
        let center: [Double]
        /// Approximate bounding box, `[west, south, east, north]` in degrees.
        let bbox: [Double]
    }

    /// The continent roots, in the order they appear in the source.
    static let continents: [Continent] = [
        Continent(
            id: "africa",
            names: [
                "en": "Africa", "de": "Afrika", "es": "África", "fr": "Afrique", "it": "Africa", "ja": "アフリカ",
                "ko": "아프리카", "nl": "Afrika", "pl": "Afryka", "ru": "Африка", "zh": "非洲",
            ],
            center: [2.0, 17.0], bbox: [-25.4, -46.9, 63.5, 37.4]),
        Continent(
            id: "americas",
            names: [
                "en": "Americas", "de": "Amerika", "es": "América", "fr": "Amériques", "it": "Americhe", "ja": "アメリカ大陸",
                "ko": "아메리카", "nl": "Amerika", "pl": "Ameryka", "ru": "Америка", "zh": "美洲",
            ],
            center: [15.0, -80.0], bbox: [-168.0, -56.0, -34.8, 83.1]),
        Continent(
            id: "antarctica",
            names: [
                "en": "Antarctica", "de": "Antarktika", "es": "Antártida", "fr": "Antarctique", "it": "Antartide",
                "ja": "南極大陸", "ko": "남극", "nl": "Antarctica", "pl": "Antarktyda", "ru": "Антарктида", "zh": "南极洲",
            ],
            center: [-82.9, 135.0], bbox: [-180.0, -90.0, 180.0, -60.0]),
        Continent(
            id: "asia",
            names: [
                "en": "Asia", "de": "Asien", "es": "Asia", "fr": "Asie", "it": "Asia", "ja": "アジア",
                "ko": "아시아", "nl": "Azië", "pl": "Azja", "ru": "Азия", "zh": "亚洲",
            ],
            center: [34.0, 100.0], bbox: [26.0, -11.0, 180.0, 81.3]),
        Continent(
            id: "europe",
            names: [
                "en": "Europe", "de": "Europa", "es": "Europa", "fr": "Europe", "it": "Europa", "ja": "ヨーロッパ",
                "ko": "유럽", "nl": "Europa", "pl": "Europa", "ru": "Европа", "zh": "欧洲",
            ],
            center: [50.1, 9.7], bbox: [-25.0, 34.0, 45.0, 72.0]),
        Continent(
            id: "oceania",
            names: [
                "en": "Oceania", "de": "Ozeanien", "es": "Oceanía", "fr": "Océanie", "it": "Oceania", "ja": "オセアニア",
                "ko": "오세아니아", "nl": "Oceanië", "pl": "Oceania", "ru": "Океания", "zh": "大洋洲",
            ],
            center: [-18.0, 150.0], bbox: [110.0, -55.0, 180.0, 29.0]),
    ]

    /// The continent id of an upper-case ISO 3166-1 alpha-2 code, nil for codes the table does not know.
    static func continent(ofCountry alpha2: String) -> String? { continentByCountry[alpha2] }

    /// Countries per continent, by M49 sub-region (comments), as space-separated alpha-2 codes.
    private static let countriesByContinent: [String: String] = [
        "africa": """
        DZ EG LY MA SD TN EH
        IO BI KM DJ ER ET TF KE MG MW MU YT MZ RE RW SC SO SS UG TZ ZM ZW
        AO CM CF TD CG CD GQ GA ST
        BW SZ LS NA ZA
        BJ BF CV CI GM GH GN GW LR ML MR NE NG SH SN SL TG
        """,
        "americas": """
        AI AG AW BS BB BQ VG KY CU CW DM DO GD GP HT JM MQ MS PR BL KN LC MF VC SX TT TC VI
        BZ CR SV GT HN MX NI PA
        AR BO BV BR CL CO EC FK GF GY PY PE GS SR UY VE
        BM CA GL PM US
        """,
        "antarctica": "AQ",
        "asia": """
        KZ KG TJ TM UZ
        CN HK MO KP JP MN KR TW
        BN KH ID LA MY MM PH SG TH TL VN
        AF BD BT IN IR MV NP PK LK
        AM AZ BH CY GE IQ IL JO KW LB OM QA SA PS SY TR AE YE
        """,
        "europe": """
        BY BG CZ HU PL MD RO RU SK UA
        AX DK EE FO FI GG IS IE IM JE LV LT NO SJ SE GB
        AL AD BA HR GI GR VA IT MT ME MK PT SM RS SI ES
        AT BE FR DE LI LU MC NL CH
        """,
        "oceania": """
        AU CX CC HM NZ NF
        FJ NC PG SB VU
        GU KI MH FM NR MP PW UM
        AS CK PF NU PN WS TK TO TV WF
        """,
    ]

    private static let continentByCountry: [String: String] = {
        var table: [String: String] = [:]
        for (continent, codes) in countriesByContinent {
            for code in codes.split(whereSeparator: { $0 == " " || $0 == "\n" }) { table[String(code)] = continent }
        }
        return table
    }()
}
