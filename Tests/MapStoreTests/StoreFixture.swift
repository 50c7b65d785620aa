import Foundation
import MapFormat
import MapIO
import MapStore
import TestSupport
import Testing

/// One fixture image (folder and `.tar.zst`), built once per test process with the real `mappack`.
final class StoreFixture: @unchecked Sendable {
    static let shared = StoreFixture()

    let folder = TemporaryFolder("store-image")
    /// The image folder.
    var imageFolder: String { folder.join("Output/fixture-1.0") }
    /// The packed image.
    var imageArchive: String { folder.join("Output/fixture-1.0.tar.zst") }
    /// Every region of the image.
    static let allRegions: [RegionID] = ["europe/ch", "europe/ch/be", "europe/ch/be/thun", "europe/ch/zh"]

    private init() {
        do {
            try SourceFixture.write(to: folder.join("source"))
            let publish = try Tool.mappack(["publish", folder.join("source"), "--out", folder.join("catalog")])
            precondition(publish.status == 0, publish.stderr)
            let recipe = folder.join("recipe.yaml")
            try Data(SourceFixture.recipe(catalog: folder.join("catalog/catalog.json")).utf8).write(to: URL(fileURLWithPath: recipe))
            let build = try Tool.mappack(
                ["build", recipe, "--cache", folder.join("cache"), "--out", folder.join("Output")],
                environment: ["SOURCE_DATE_EPOCH": "1790000000"])
            precondition(build.status == 0, build.stderr)
        } catch {
            preconditionFailure("fixture image: \(error)")
        }
    }

    func image(archive: Bool) -> PreinstalledImage { PreinstalledImage(url: URL(fileURLWithPath: archive ? imageArchive : imageFolder)) }

    func manifest() throws -> ImageManifest {
        try ManifestReader.read(Data(contentsOf: URL(fileURLWithPath: imageFolder + "/manifest.json")), file: "manifest.json")
    }
}

/// A device: a storage folder and a cache folder in a temp dir of their own.
final class Device: @unchecked Sendable {
    let folder = TemporaryFolder("store-device")
    var storage: String { folder.join("storage") }
    var cache: String { folder.join("cache") }

    var storageURL: URL { URL(fileURLWithPath: storage, isDirectory: true) }
    /// The storage folder as the store names it (`store.storage.path`: `.`, `..` and doubled slashes removed).
    var storageFolder: String { folderPath(storage) }
    var cacheURL: URL { URL(fileURLWithPath: cache, isDirectory: true) }

    func open(image: PreinstalledImage? = nil, storage: String? = nil, full: Bool = false) async throws -> MapStore {
        try await MapStore.open(
            storage: URL(fileURLWithPath: storage ?? self.storage, isDirectory: true), cache: cacheURL, preinstalled: image,
            options: .init(fullValidation: full))
    }

    /// Opens a store on this device from `image` (the fixture's folder image when nil), downloading from `catalog`.
    func open(image: PreinstalledImage? = nil, catalog: URL, options: MapStore.Options = .init()) async throws -> MapStore {
        var options = options
        options.catalogURL = catalog
        return try await MapStore.open(
            storage: storageURL, cache: cacheURL, preinstalled: image ?? StoreFixture.shared.image(archive: false), options: options)
    }

    /// Runs `mappack store VERB … --storage --cache` with an optional crash point. Waits on a thread
    /// of its own: a test blocking a cooperative thread for seconds would starve the async download
    /// tests running beside it (two cores, two pool threads). The child is killed after `timeout` seconds.
    func run(_ verb: [String], crashAt: String? = nil, timeout: TimeInterval = Tool.defaultTimeout) async throws -> Tool.Result {
        let arguments = ["store"] + verb + ["--storage", storage, "--cache", cache]
        let environment = crashAt.map { ["MAPSTORE_CRASH_AT": $0] } ?? [:]
        return try await offPool { try Tool.mappack(arguments, environment: environment, timeout: timeout) }
    }
}

/// Flips one bit of a file in place.
func flipBit(in path: String, at offset: UInt64 = 10) throws {
    let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
    try handle.seek(toOffset: offset)
    let byte = try #require(try handle.read(upToCount: 1)?.first)
    try handle.seek(toOffset: offset)
    try handle.write(contentsOf: Data([byte ^ 0x01]))
    try handle.close()
}

/// Runs blocking `body` (a subprocess, a fixture build) on a thread of its own.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// `path` as MapStore names folders given as URLs (`.`, `..` and doubled slashes removed).
func folderPath(_ path: String) -> String { URL(fileURLWithPath: path, isDirectory: true).standardizedFileURL.path }
