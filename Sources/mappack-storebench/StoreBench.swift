import Foundation

/// `mappack-storebench`: MapStore's benchmark rows (issue 18), one JSON line per mode on standard output.
/// `Benchmarks/store.sh` builds the worlds and images, serves them with nginx and runs it.
@main
enum StoreBench {
    static func main() async {
        let arguments: BenchArguments
        do {
            arguments = try BenchArguments.parse(Array(CommandLine.arguments.dropFirst()))
        } catch {
            if let message = error.message { FileHandle.standardError.write(Data("mappack-storebench: \(message)\n".utf8)) }
            FileHandle.standardError.write(Data((BenchArguments.usage + "\n").utf8))
            exit(error.message == nil ? 0 : 2)
        }
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let line: Data?
            switch arguments.mode {
            case .path: line = try encoder.encode(try await PathLatencyBench.run(arguments))
            case .open: line = try await OpenBench.run(arguments).map { try encoder.encode($0) }
            case .inPlace: line = try encoder.encode(try await InPlaceBench.run(arguments))
            }
            if let line { FileHandle.standardOutput.write(line + Data("\n".utf8)) }
        } catch {
            FileHandle.standardError.write(Data("mappack-storebench: \(error.localizedDescription)\n".utf8))
            exit(1)
        }
    }
}
