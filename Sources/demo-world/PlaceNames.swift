/// Invented but pronounceable place names, deterministic from a random stream, so search databases
/// and `cities` look like a gazetteer without copying one.
enum PlaceNames {
    private static let onsets = [
        "Al", "Ber", "Cal", "Dor", "El", "Fen", "Gar", "Hal", "Is", "Jor", "Kel", "Lin",
        "Mar", "Nor", "Ol", "Pel", "Ros", "Sal", "Tor", "Ul", "Val", "Wes", "Zel", "Bran",
    ]
    private static let middles = ["a", "e", "i", "o", "u", "an", "en", "ir", "or", "un", "ar", "el"]
    private static let endings = [
        "burg", "dorf", "heim", "ville", "stad", "feld", "mont", "hausen", "wick",
        "polis", "grad", "ton", "berg", "bach", "ford", "haven",
    ]
    private static let features = [
        "Station", "Park", "Square", "Market", "Bridge", "Church", "School", "Harbour",
        "Hill", "Lake", "Castle", "Museum", "Airport", "Hospital", "Stadium", "Gate",
    ]

    /// A town name such as `Maranburg`.
    static func town(_ random: inout SeededRandom) -> String {
        onsets[random.below(onsets.count)] + middles[random.below(middles.count)]
            + endings[random.below(endings.count)]
    }

    /// A point of interest such as `Maranburg Station`.
    static func feature(_ random: inout SeededRandom) -> String {
        town(&random) + " " + features[random.below(features.count)]
    }
}
