import MapBuild
import Testing

@Suite struct BuildPhaseTests {
    /// The names `--json` prints in `phase` events, scripts match and `MAPPACK_TEST_PAUSE_AT` takes:
    /// renaming a case must not rename its phase.
    @Test func phasesKeepTheirNamesOnTheWire() {
        #expect(
            BuildPhase.allCases.map(\.rawValue) == [
                "plan", "up to date", "check", "reuse", "chunked", "fetch", "unpack", "manifest", "cache seed", "pack", "mbtiles",
                "maplibre-offline", "pmtiles", "erofs", "publish", "merge", "catalog",
            ])
    }
}
