import Foundation
import MapBuild
import MapFetch
import MapFormat
import MapIO

/// `mappack merge SHARD...`: assembles an image from the shards of one build.
enum MergeCommand {
    static func run(_ raw: [String], terminal: Terminal) async throws -> ExitCode {
        let arguments = try Arguments(raw, verb: Verbs.merge)
        guard !arguments.positionals.isEmpty else {
            throw UsageError(message: "merge needs the shard folders: mappack merge OUT/x.shard-1-of-3 OUT/x.shard-2-of-3 …")
        }
        let signingKey = try arguments.option(Verbs.sign).map { (path: $0, text: try KeyFiles.read($0)) }
        let options = BuildOptions(
            outputRoot: try Arguments.outputFolder(arguments.option(Verbs.out) ?? "Output", option: Verbs.out),
            cache: DownloadCache(root: FileSystem.absolute(DownloadCache.defaultRoot())),
            jobs: try arguments.int(Verbs.jobs, range: 1...256) ?? ProcessInfo.processInfo.activeProcessorCount,
            sourceDateEpoch: nil, signingKey: signingKey)
        let outputLock = try await OutputLock.acquire(options.outputRoot, terminal: terminal)
        defer { withExtendedLifetime(outputLock) {} }
        var descriptions = BuildProgress.Descriptions()
        descriptions.pack = "the packed image"
        descriptions.publish = FileSystem.absolute(options.outputRoot)
        let progress = BuildProgress(terminal: terminal, descriptions: descriptions)
        let report: BuildReport
        do {
            report = try await Interrupts.cancellable(gate: options.gate, progress: progress) {
                try await ImageBuilder.merge(shards: arguments.positionals, options: options) { event in
                    if terminal.json { terminal.event(BuildCommand.eventObject(event)) }
                    progress.take(event)
                }
            }
        } catch {
            progress.finish()
            throw error
        }
        progress.finish()
        if terminal.json {
            terminal.event(
                MergeDoneEvent(
                    image: report.imagePath, packed: report.packedPath, imageID: report.summary.imageID, outputs: BuildCommand.outputObjects(report)))
        } else {
            terminal.line(
                "merged \(arguments.positionals.count) shards: \(report.summary.name) \(report.summary.mapVersion), image id \(report.summary.imageID.prefix(16))"
            )
            BuildCommand.printOutputs(report, terminal: terminal)
        }
        return .success
    }
}
