import Foundation
import MapBuild

// Built two ways (see `make fuzz`):
// - with `-sanitize=fuzzer,address -D FUZZING`: a libFuzzer binary; the target comes from
//   MAPPACK_FUZZ_TARGET (a `FuzzEntry` case) and libFuzzer supplies `main`;
// - as a debug build: a replayer that runs files through a target, for reproducing a crash by hand:
//   `mappack-fuzz TARGET FILE...`;
// - as a plain release build (part of `swift build -c release`), which holds no test hooks
//   (`FuzzEntry` is compiled only with `MAPPACK_TEST_HOOKS` or `FUZZING`): it says so and exits 2.

#if FUZZING
    /// The target libFuzzer feeds, read once from the environment (a global `let`: initialized
    /// lazily and exactly once, and `FuzzEntry` is `Sendable`, so the callback may read it from any thread).
    private let fuzzTarget: FuzzEntry = {
        let name = ProcessInfo.processInfo.environment["MAPPACK_FUZZ_TARGET"] ?? ""
        guard let target = FuzzEntry(rawValue: name) else {
            FileHandle.standardError.write(
                Data("set MAPPACK_FUZZ_TARGET to one of: \(FuzzEntry.allCases.map(\.rawValue).joined(separator: ", "))\n".utf8))
            exit(2)
        }
        return target
    }()

    /// libFuzzer's driver (`LLVMFuzzerRunDriver`, LLVM ≥ 13). SwiftPM renames an executable's `main`,
    /// so libFuzzer's own `main` is never linked; this program's `main` starts the driver instead.
    @_silgen_name("LLVMFuzzerRunDriver")
    private func runFuzzerDriver(
        _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    /// Starts libFuzzer with this process's arguments.
    @main
    struct FuzzDriver {
        static func main() {
            _ = fuzzTarget
            var argc = CommandLine.argc
            var argv = unsafe CommandLine.unsafeArgv
            // libFuzzer owns the input buffer for the call only; `Data` copies it.
            exit(
                unsafe runFuzzerDriver(&argc, &argv) { bytes, count in
                    fuzzTarget.run(unsafe bytes.map { unsafe Data(bytes: $0, count: count) } ?? Data())
                    return 0
                })
        }
    }
#elseif MAPPACK_TEST_HOOKS
    /// Replays inputs through a fuzz target.
    @main
    struct FuzzReplay {
        static func main() {
            let arguments = CommandLine.arguments.dropFirst()
            guard let name = arguments.first, let target = FuzzEntry(rawValue: name) else {
                FileHandle.standardError.write(
                    Data("usage: mappack-fuzz \(FuzzEntry.allCases.map(\.rawValue).joined(separator: "|")) FILE...\n".utf8))
                exit(2)
            }
            for path in arguments.dropFirst() {
                guard let data = FileManager.default.contents(atPath: path) else { continue }
                target.run(data)
                print("ok \(path)")
            }
        }
    }
#else
    /// A release build without the fuzz entry points.
    @main
    struct FuzzUnavailable {
        static func main() {
            FileHandle.standardError.write(
                Data(
                    "mappack-fuzz: a release build holds no fuzz targets; use a debug build (swift build --product mappack-fuzz) or make fuzz\n".utf8)
            )
            exit(2)
        }
    }
#endif
