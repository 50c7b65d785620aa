import Foundation

/// Where a catalog's bundle `url` points, resolved against the catalog's own URL, and the checks
/// that keep it where the catalog is: one rule for the build and for MapStore's downloads.
///
/// A bundle URL is refused when it does not parse, when it names another scheme, host, port or
/// user than the catalog, when its path (or the relative text) holds a `..` segment once
/// percent-decoded (`%2e%2e` is `..` to a server that decodes before it normalizes), and, for a
/// `file://` catalog, when it leaves the catalog's folder. A list of allowed mirrors is not
/// supported: a bundle lives beside its catalog.
public enum BundleURL {
    /// The absolute URL of `relative`, a bundle's `url` in the catalog at `catalog`; nil when it is
    /// refused (see the type's rules).
    public static func resolve(_ relative: String, catalog: URL) -> URL? {
        guard !relative.isEmpty, !climbsOutDecoded(relative),
            let url = URL(string: relative, relativeTo: catalog)?.absoluteURL
        else { return nil }
        guard url.scheme?.lowercased() == catalog.scheme?.lowercased(), url.host?.lowercased() == catalog.host?.lowercased(),
            url.port == catalog.port, url.user == catalog.user
        else { return nil }
        let path = url.path
        guard !path.contains("\0"), !path.split(separator: "/").contains("..") else { return nil }
        if url.isFileURL {
            // Both standardized (`//` and `.` folded; `..` was refused above), so spellings agree.
            let folder = catalog.deletingLastPathComponent().standardizedFileURL.path
            guard url.standardizedFileURL.path.hasPrefix(folder.hasSuffix("/") ? folder : folder + "/") else { return nil }
        }
        return url
    }

    /// True when `relative`, percent-decoded up to its query or fragment, has a `..` segment, or
    /// does not decode. Only a URL with a `%` needs this; others are checked by `RegionTree`'s
    /// byte scan.
    public static func climbsOutDecoded(_ relative: String) -> Bool {
        let end = relative.firstIndex { $0 == "?" || $0 == "#" } ?? relative.endIndex
        guard let decoded = relative[..<end].removingPercentEncoding else { return true }
        if decoded.contains("\0") { return true }
        // A backslash is a separator to some servers.
        return decoded.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "/" || $0 == "\\" }).contains("..")
    }
}
