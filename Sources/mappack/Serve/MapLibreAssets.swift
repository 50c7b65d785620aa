import Foundation

/// MapLibre GL JS for the viewer page, read from the PyPI wheel `maplibre` (its
/// `maplibre/srcjs/maplibre-gl.js` and `.css`) in the project's `.venv` (`make venv`), or from the
/// folder `--maplibre-js` names. Nothing of it is in the repository.
struct MapLibreAssets: Sendable {
    static let script = "maplibre-gl.js"
    static let stylesheet = "maplibre-gl.css"

    /// The folder the files came from.
    let folder: String
    let scriptBytes: Data
    let stylesheetBytes: Data

    /// Reads the files from `explicit` (an error when they are not there), else from the first
    /// `.venv` found in the current folder, the binary's folder or one of their parents; nil when none has them.
    static func load(explicit: String?) throws -> MapLibreAssets? {
        if let explicit {
            guard let assets = read(explicit) else {
                throw UsageError(
                    message: "--maplibre-js \(explicit): no \(script) and \(stylesheet) there; give the folder holding both "
                        + "(in the PyPI wheel maplibre: site-packages/maplibre/srcjs; `make venv` installs it into .venv)")
            }
            return assets
        }
        for folder in candidates() {
            if let assets = read(folder) { return assets }
        }
        return nil
    }

    /// `.venv/lib/python*/site-packages/maplibre/srcjs` under the current folder, the binary's
    /// folder, and each of their parents.
    static func candidates() -> [String] {
        var roots: [String] = []
        for start in [FileManager.default.currentDirectoryPath, Bundle.main.executableURL?.deletingLastPathComponent().path].compactMap({ $0 }) {
            var url = URL(fileURLWithPath: start).standardizedFileURL
            while true {
                if !roots.contains(url.path) { roots.append(url.path) }
                let parent = url.deletingLastPathComponent()
                if parent.path == url.path { break }
                url = parent
            }
        }
        var found: [String] = []
        for root in roots {
            let lib = root + "/.venv/lib"
            guard let pythons = try? FileManager.default.contentsOfDirectory(atPath: lib) else { continue }
            for python in pythons.sorted() where python.hasPrefix("python") {
                found.append(lib + "/" + python + "/site-packages/maplibre/srcjs")
            }
        }
        return found
    }

    private static func read(_ folder: String) -> MapLibreAssets? {
        guard let script = FileManager.default.contents(atPath: folder + "/" + script),
            let stylesheet = FileManager.default.contents(atPath: folder + "/" + stylesheet)
        else { return nil }
        return MapLibreAssets(folder: folder, scriptBytes: script, stylesheetBytes: stylesheet)
    }
}
