import Foundation
import MapFormat
import MapIO
import MapVerify
import TestSupport
import Testing

@testable import MapBuild

/// Replays every input in `Fuzz/regressions/<target>/` (crashes, hangs and traps found by
/// `make fuzz` or by hand) through the same entry points the fuzzer drives: each must be
/// refused with an error, never crash, trap or loop.
@Suite struct FuzzRegressionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/regressions").path

    static var inputs: [String] {
        FuzzEntry.allCases.flatMap { target in
            ((try? FileManager.default.contentsOfDirectory(atPath: root + "/" + target.rawValue)) ?? []).sorted().map { target.rawValue + "/" + $0 }
        }
    }

    @Test(arguments: inputs)
    func regressionInputIsHandled(_ input: String) async throws {
        let target = try #require(FuzzEntry(rawValue: String(input.split(separator: "/")[0])))
        let data = try Data(contentsOf: URL(fileURLWithPath: FuzzRegressionTests.root + "/" + input))
        // The build target's `run` waits on a semaphore, which a test on the cooperative pool must not.
        if target != .build { target.run(data) }
        // Beyond not crashing: every regression input is invalid and must be refused.
        switch target {
        case .recipe: #expect(throws: (any Error).self) { _ = try Recipe.parse(data, file: input) }
        case .catalog: #expect(throws: (any Error).self) { _ = try CatalogSource.decode(data, url: URL(fileURLWithPath: "/" + input)) }
        case .manifest: #expect(throws: (any Error).self) { _ = try ImageVerifier.readManifest(data, file: input) }
        case .extractor: break
        case .build: #expect(await FuzzEntry.build(data) != nil)
        case .catalogSignature: #expect(throws: CatalogTrustError.self) { _ = try FuzzEntry.checkCatalogSignature(data) }
        case .geojson: #expect(FuzzEntry.readGeoJSON(data).regions?.isBadInput == true)
        }
    }

    @Test func buildTargetTakesAValidCatalogThroughAWholeOfflineBuild() async throws {
        let folder = TemporaryFolder("fuzz-build")
        #expect(try Tool.run(Tool.path("demo-world"), ["--out", folder.join("src"), "--only", "europe/li", "--scale", "0.05"]).status == 0)
        #expect(try Tool.mappack(["publish", folder.join("src"), "--out", folder.join("www")]).status == 0)
        let catalog = try Data(contentsOf: URL(fileURLWithPath: folder.join("www/catalog.json")))
        let error = await FuzzEntry.build(catalog, bundles: folder.join("www/bundles"))
        #expect(error == nil, "\(String(describing: error))")
        // Without the bundles, the offline build fails instead of reaching for the network.
        #expect(await FuzzEntry.build(catalog, bundles: nil) != nil)
    }

    @Test func everyTargetHasRegressionInputs() {
        for target in FuzzEntry.allCases { #expect(FuzzRegressionTests.inputs.contains { $0.hasPrefix(target.rawValue + "/") }) }
    }
}
