import Foundation
import MapFormat
import Testing

@Suite struct PathNameTests {
    @Test(arguments: ["2026.11.0", "1.0", "1", "demo-world", "fixture", "c", "europe", "v2+build.7", "A_b-C"])
    func acceptsEveryValueMappackWrites(_ name: String) {
        #expect(PathName.problem(name) == nil)
    }

    @Test(arguments: [
        "", ".", "..", ".hidden", "-option", "a/b", "a/../b", "a..b", "a\u{0}b", "a b", "a\\b", "é", "a\nb", String(repeating: "a", count: 129),
    ])
    func refusesWhatCouldBeOrHoldAPath(_ name: String) {
        #expect(PathName.problem(name) != nil, "\(name)")
    }

    @Test(arguments: ["europe", "europe/ch/be", "europe/ch/be/thun", "world/r12", "r0"])
    func acceptsRegionIDs(_ id: String) {
        #expect(PathName.regionIDProblem(id) == nil)
    }

    @Test(arguments: ["", "/europe", "europe/", "europe//ch", "europe/../ch", "europe/./ch", "../europe", "europe/.ch", "europe/c h"])
    func refusesRegionIDsWithBadParts(_ id: String) {
        #expect(PathName.regionIDProblem(id) != nil, "\(id)")
    }
}
