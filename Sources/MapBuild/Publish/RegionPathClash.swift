import MapFormat

/// Two region ids whose files would land on one path once their bundles are installed side by
/// side: ids equal but for case (one folder on the case-insensitive file systems of macOS, iOS and
/// Windows), or an id that goes on through a file another region keeps in its folder (`r/a/tiles.db`
/// needs a folder where `r/a` keeps its file `regions/r/a/tiles.db`). `mappack import` and
/// `mappack publish` refuse both, naming the two ids.
struct RegionPathClash: Sendable {
    /// The id met first, and the one that clashes with it.
    let first: RegionID
    let second: RegionID
    /// What is wrong, naming both ids.
    let problem: String

    /// The first clash among `ids`, in their order. `files(owner, below)` gives the names of the
    /// files `owner` keeps directly in its folder `regions/OWNER/`, where the bundles of `owner` or of
    /// `below`, an id under it, would put them (asked only of such pairs).
    static func find<Failure: Error>(
        _ ids: [RegionID], files: (_ owner: RegionID, _ below: RegionID) throws(Failure) -> [String]
    ) throws(Failure) -> RegionPathClash? {
        var folded: [String: RegionID] = [:]
        for id in ids {
            let key = id.rawValue.lowercased()
            if let other = folded[key] {
                return RegionPathClash(
                    first: other, second: id,
                    problem: "'\(id)' and '\(other)' differ only in case, so they are one folder on macOS, iOS and Windows; rename one")
            }
            folded[key] = id
        }
        for id in ids {
            let parts = id.rawValue.lowercased().split(separator: "/", omittingEmptySubsequences: false)
            for cut in parts.indices.dropFirst() {
                guard let owner = folded[parts[..<cut].joined(separator: "/")] else { continue }
                if let file = try files(owner, id).first(where: { $0.lowercased() == parts[cut] }) {
                    return RegionPathClash(
                        first: owner, second: id,
                        problem: "'\(id)' needs a folder where '\(owner)' keeps its file regions/\(owner)/\(file); rename '\(id)'")
                }
            }
        }
        return nil
    }
}
