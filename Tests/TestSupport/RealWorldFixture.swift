import Foundation

/// A small real world, made once per test process: Natural Earth countries (Switzerland,
/// Liechtenstein, Austria) cut into vector tiles with tippecanoe and GeoNames cities, by
/// `Tools/realworld/make_real_world.py` in the project's `.venv` (`make venv`), then published with
/// the real `mappack`. The outside checkers (`Tools/realworld/check_outputs.py`: GDAL, MapLibre
/// Native through pymgl, mapbox_vector_tile, pmtiles) run from the same `.venv`.
public final class RealWorldFixture: @unchecked Sendable {
    public static let shared = RealWorldFixture()

    public let folder = TemporaryFolder("real-world")
    /// The source folder `make_real_world.py` wrote.
    public var source: String { folder.join("source") }
    /// The published catalog.
    public var catalog: String { folder.join("catalog/catalog.json") }
    /// The region ids of the three countries.
    public static let switzerland = "europe/western-europe/ch"
    public static let liechtenstein = "europe/western-europe/li"
    public static let austria = "europe/western-europe/at"

    /// The project's venv interpreter.
    public static var python: String { Tool.repositoryRoot + "/.venv/bin/python" }
    /// `Tools/realworld/check_outputs.py`.
    public static var checker: String { Tool.repositoryRoot + "/Tools/realworld/check_outputs.py" }

    private init() {
        do {
            let made = try Tool.run(
                Self.python, [Tool.repositoryRoot + "/Tools/realworld/make_real_world.py", "--out", source, "--countries", "CH,LI,AT"],
                timeout: 300)
            precondition(made.status == 0, "make_real_world.py (run `make venv` first): \(made.stderr)")
            let publish = try Tool.mappack(["publish", source, "--out", folder.join("catalog")])
            precondition(publish.status == 0, publish.stderr)
        } catch {
            preconditionFailure("real world: \(error)")
        }
    }

    /// A recipe over the real world's catalog (or `catalog`) with the world overview in the cache seed.
    public func recipe(name: String = "alps", catalog: String? = nil, include: [String], formats: String) -> String {
        """
        name: \(name)
        catalog: \(catalog ?? self.catalog)
        regions:
          include: [\(include.joined(separator: ", "))]
        cacheSeed:
          include: [world]
        output:
          formats: \(formats)
        """
    }

    /// Runs `check_outputs.py` with `arguments` (a tool nobody here wrote does the reading).
    public static func check(_ arguments: [String]) throws -> Tool.Result {
        try Tool.run(python, [checker] + arguments, environment: ["EGL_PLATFORM": "surfaceless"], timeout: 300)
    }
}
