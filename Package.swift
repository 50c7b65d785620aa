// swift-tools-version:6.2
import PackageDescription

/// Settings every Swift target shares: strict memory safety (every unsafe construct is marked
/// `unsafe` where it is used, and under Sources its file is on `UnsafeCodeListTests`' list:
/// ARCHITECTURE.md, "Unsafe code"), upcoming-feature clean, warnings fail the build; and the test
/// hooks (`CrashPoint`, `TestPause`, `FuzzEntry`) compiled into debug builds only, so the release
/// library an app ships and the release `mappack` hold none (`make build` checks).
let strictSettings: [SwiftSetting] = [
    .strictMemorySafety(),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .treatAllWarnings(as: .error),
    .define("MAPPACK_TEST_HOOKS", .when(configuration: .debug)),
]

let package = Package(
    name: "mappack",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "MapStore", targets: ["MapStore"]),
        .library(name: "MapFormat", targets: ["MapFormat"]),
        .executable(name: "mappack", targets: ["mappack"]),
        .executable(name: "demo-world", targets: ["demo-world"]),
        .executable(name: "mappack-storebench", targets: ["mappack-storebench"]),
    ],
    targets: [
        // Thin module maps over Debian's C libraries (installed by `make deps`).
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CArchive", pkgConfig: "libarchive", providers: [.apt(["libarchive-dev"])]),
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CZck", pkgConfig: "zck", providers: [.apt(["libzck-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CMalloc"),
        .systemLibrary(name: "CLinux"),

        .target(name: "MapFormat"),
        .target(name: "MapIO", dependencies: ["MapFormat", "CArchive", "CZstd", "CZlib", "CSQLite", "CCrypto", "CMalloc", "CLinux"]),
        // Checking images and installed stores: used by the CLI (`verify`, `inspect`), the build
        // (`--from`) and MapStore (install, status, repair).
        .target(name: "MapVerify", dependencies: ["MapIO", "MapFormat"]),
        .target(name: "MapFetch", dependencies: ["MapIO", "MapFormat", "CCurl", "CZck"]),
        .target(name: "MapBuild", dependencies: ["MapFetch", "MapVerify", "MapIO", "MapFormat", "CYAML"]),
        .target(name: "MapStore", dependencies: ["MapFetch", "MapVerify", "MapIO", "MapFormat"]),
        .executableTarget(name: "mappack", dependencies: ["MapBuild", "MapStore", "MapFetch", "MapVerify", "MapIO", "MapFormat"]),
        .executableTarget(name: "demo-world", dependencies: ["MapIO", "MapFormat"]),
        // The first start of an app with preinstalled maps, written against MapStore (`swift run StoreDemo --help`).
        .executableTarget(name: "StoreDemo", dependencies: ["MapStore"], path: "Examples/StoreDemo"),
        // MapStore's benchmark rows (`Benchmarks/store.sh`): path(of:) during an update, open of an installed store.
        .executableTarget(name: "mappack-storebench", dependencies: ["MapStore", "MapIO", "MapFormat"]),
        // libFuzzer targets (`make fuzz`) or, built normally, a replayer of fuzz inputs.
        .executableTarget(name: "mappack-fuzz", dependencies: ["MapBuild"]),

        // Shared test fixtures (servers, temp folders, running the built binaries); never shipped.
        .target(name: "TestSupport", dependencies: ["MapIO", "MapFormat"], path: "Tests/TestSupport"),

        .testTarget(name: "MapFormatTests", dependencies: ["TestSupport", "MapFormat"]),
        .testTarget(name: "MapIOTests", dependencies: ["TestSupport", "MapVerify", "MapIO", "MapFormat"]),
        .testTarget(name: "MapFetchTests", dependencies: ["TestSupport", "MapFetch", "MapIO", "MapFormat"]),
        .testTarget(name: "MapBuildTests", dependencies: ["TestSupport", "MapBuild", "MapFetch", "MapVerify", "MapIO", "MapFormat"]),
        .testTarget(name: "MapStoreTests", dependencies: ["TestSupport", "MapStore", "MapVerify", "MapIO", "MapFormat"]),
        // The CLI's own types (its JSON lines); everything else about it is tested through the binary.
        .testTarget(name: "mappackTests", dependencies: ["mappack"]),
        .testTarget(name: "EndToEndTests", dependencies: ["TestSupport", "MapIO", "MapFormat"]),
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + strictSettings
}
