import Foundation

/// StoreDemo's command line: where the app keeps its maps and where it finds the image and catalogs.
struct DemoArguments {
    /// The preinstalled image shipped with the app (folder or `.tar.zst`).
    var image: String
    /// The app's persistent map folder and cache folder.
    var storage: String
    var cache: String
    /// The catalog the image came from (its bundle URLs are relative to it).
    var catalog: URL
    /// The region to download (default: the smallest one on offer).
    var region: String?
    /// Where to look for a newer map version (default: the catalog).
    var updateCatalog: URL?
    /// Names in this language (BCP 47).
    var language: String?

    static let usage = """
        usage: StoreDemo --image PATH --storage DIR --cache DIR --catalog URL
                         [--download REGION] [--update-catalog URL] [--language TAG]
        Shows the first start of an app with preinstalled maps: install the image, list the regions on
        offer, download one with a pause and a resume, check for an update and run it.
        """

    /// Parses `arguments` (without the program name); the error says what is wrong.
    static func parse(_ arguments: [String]) throws(DemoUsageError) -> DemoArguments {
        var values: [String: String] = [:]
        var rest = arguments[...]
        let known = ["--image", "--storage", "--cache", "--catalog", "--download", "--update-catalog", "--language"]
        while let name = rest.popFirst() {
            if name == "--help" || name == "-h" { throw DemoUsageError(message: nil) }
            guard known.contains(name) else { throw DemoUsageError(message: "unknown option '\(name)'") }
            guard let value = rest.popFirst() else { throw DemoUsageError(message: "\(name) needs a value") }
            values[name] = value
        }
        func required(_ name: String) throws(DemoUsageError) -> String {
            guard let value = values[name] else { throw DemoUsageError(message: "\(name) is required") }
            return value
        }
        func url(_ name: String) throws(DemoUsageError) -> URL? {
            guard let text = values[name] else { return nil }
            if text.hasPrefix("/") { return URL(fileURLWithPath: text) }
            guard let url = URL(string: text), url.scheme != nil else {
                throw DemoUsageError(message: "\(name) '\(text)' is not a URL (http://…, https://…, file://… or an absolute path)")
            }
            return url
        }
        let image = try required("--image")
        let storage = try required("--storage")
        let cache = try required("--cache")
        guard let catalog = try url("--catalog") else { throw DemoUsageError(message: "--catalog is required") }
        return DemoArguments(
            image: image, storage: storage, cache: cache, catalog: catalog,
            region: values["--download"], updateCatalog: try url("--update-catalog"), language: values["--language"])
    }
}

/// A command line StoreDemo cannot use; nil message asks for the usage text alone.
struct DemoUsageError: Error {
    let message: String?
}
