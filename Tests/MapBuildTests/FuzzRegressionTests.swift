import Foundation
@testable import MapBuild
import MapIO
import Testing

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
    func regressionInputIsHandled(_ input: String) throws {
        let target = try #require(FuzzEntry(rawValue: String(input.split(separator: "/")[0])))
        let data = try Data(contentsOf: URL(fileURLWithPath: FuzzRegressionTests.root + "/" + input))
        target.run(data)
        // Beyond not crashing: every regression input is invalid and must be refused.
        switch target {
        case .recipe: #expect(throws: (any Error).self) { _ = try Recipe.parse(data, file: input) }
        case .catalog: #expect(throws: (any Error).self) { _ = try CatalogSource.decode(data, url: URL(fileURLWithPath: "/" + input)) }
        case .manifest: #expect(throws: (any Error).self) { _ = try ImageVerifier.readManifest(data, file: input) }
        case .extractor: break
        }
    }

    @Test func everyTargetHasRegressionInputs() {
        for target in FuzzEntry.allCases { #expect(FuzzRegressionTests.inputs.contains { $0.hasPrefix(target.rawValue + "/") }) }
    }
}
