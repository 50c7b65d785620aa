import Foundation
import MapFormat
import MapIO

/// One form a build writes its image in (a recipe's `output.formats` entry). A build first stages
/// every output from the finished image folder, then renames each staged result into the output
/// root. A new format is one more conforming type and its case in `Recipe.OutputFormat`.
protocol ImageOutput: Sendable {
    /// The build phase announced while `stage` runs (nil for an output that costs nothing).
    var phase: BuildPhase? { get }
    /// The name the output is published under in the output root, for the image `imageName`.
    func publishedName(imageName: String) -> String
    /// The path, relative to the output root, the build stamp records to notice a changed output.
    func stampedPath(imageName: String) -> String
    /// Writes the output from `source.imageFolder` into the staging folder; returns the name of the
    /// staged result inside it (renamed to `publishedName` at publish).
    func stage(_ source: ImageOutputSource) throws -> String
    /// Files `stage` also writes into the staging folder, under the names they are published
    /// under (a partition image's verity sidecar and its signature); published before the output
    /// itself, so an output that shows has its companions. Those not written are skipped.
    func companionNames(imageName: String) -> [String]
}

extension ImageOutput {
    func companionNames(imageName: String) -> [String] { [] }
}

/// An output that is one file beside the image folder, `<image><fileExtension>`.
protocol SingleFileOutput: ImageOutput {
    static var fileExtension: String { get }
}

extension SingleFileOutput {
    func publishedName(imageName: String) -> String { imageName + Self.fileExtension }

    func stampedPath(imageName: String) -> String { publishedName(imageName: imageName) }
}

/// What an output is made from: the finished image folder in a staging area.
struct ImageOutputSource {
    /// The staging folder (outputs are written directly in it).
    let stagingFolder: String
    /// The build makes its outputs durable (`BuildOptions.sync`): a single-file output fsyncs itself.
    var sync = true
    /// The image stem, `<name>-<mapVersion>`.
    let imageName: String
    /// The build time (also the packed form's file times).
    let built: String
    let cacheSeed: ImageCacheSeed?
    let signature: Data?
    /// The manifest's image id.
    var imageID = ""
    /// The build's signing key (path, text), which also signs what an output carries beside it.
    var signingKey: (path: String, text: String)?
    /// The catalog id and the image's map version.
    let catalog: String
    let mapVersion: MapVersion
    /// The image's regions with the store files of their own bundles (read when an output asks).
    let regions: @Sendable () throws -> [OutputRegion]
    /// Hears the store files and bytes packed so far while the packed form is written.
    var packProgress: @Sendable (_ files: Int, _ bytes: Int64) -> Void = { _, _ in }

    /// The complete image (manifest, signature, cache seed, `store/`), inside the staging folder.
    static let imageEntry = "image"
    var imageFolder: String { stagingFolder + "/" + ImageOutputSource.imageEntry }
    /// The image's store folder.
    var storeFolder: String { imageFolder + "/" + ImageManifest.storeFolder }

    /// The tile databases of the image's regions, the recipe's (issue 42): the cache seed's stay in
    /// the seed, so a tile output holds, bounds and centres on what the recipe asked for.
    func tileDatabases(_ regions: [OutputRegion]) throws -> TileDatabases {
        try TileDatabases(regions: regions, store: storeFolder)
    }
}

/// One region of an image as outputs that regroup data by region see it.
package struct OutputRegion: Sendable {
    package let id: RegionID
    /// The recipe's `include` entry that brought it.
    package let broughtBy: RegionID
    package let name: String
    /// `[west, south, east, north]`, when the catalog has it.
    package let bbox: [Double]?
    /// `[latitude, longitude]` of the region's centre, when the catalog has it.
    package let center: [Double]?
    /// The files of the region's own bundles, sorted by path.
    package let files: [OutputFile]

    package init(id: RegionID, broughtBy: RegionID, name: String, bbox: [Double]?, center: [Double]? = nil, files: [OutputFile]) {
        self.id = id
        self.broughtBy = broughtBy
        self.name = name
        self.bbox = bbox
        self.center = center
        self.files = files
    }
}

/// One store file of a region's bundle.
package struct OutputFile: Sendable {
    /// Store-relative path.
    package let path: String
    /// The bundle that holds it (nil when the reader does not know, as for a cache seed's file
    /// that no manifest entry names).
    package let bundle: BundleDigest?

    package init(path: String, bundle: BundleDigest?) {
        self.path = path
        self.bundle = bundle
    }
}

extension Recipe.OutputFormat {
    /// How this format is written.
    var output: any ImageOutput {
        switch self {
        case .directory: FolderOutput()
        case .tarZst: PackedOutput()
        case .mbtiles: MBTilesOutput()
        case .maplibreOffline: MapLibreOfflineOutput()
        case .pmtiles: PMTilesOutput()
        case .erofs: ErofsOutput()
        }
    }
}

extension Recipe {
    /// The outputs the recipe asks for, in the order they are staged and published.
    var outputs: [any ImageOutput] {
        Recipe.OutputFormat.allCases.filter(formats.contains).map(\.output)
    }
}

extension StagingArea {
    /// The image a build assembles in its staging folder; every output is staged from it.
    var imageFolder: String { path + "/" + ImageOutputSource.imageEntry }
}
