import Foundation
import MapFormat
import MapIO
import MapVerify

/// `mappack inspect IMAGE`: what an image holds, from its manifest (quick checks only).
enum InspectCommand {
    static func run(_ raw: [String], terminal: Terminal) throws -> ExitCode {
        let arguments = try Arguments(raw, verb: Verbs.inspect)
        let path = try arguments.expect(["image"])[0]
        guard FileSystem.exists(path) else { throw ImageOpenError.noSuchFile(path: path) }
        let trusted = try arguments.option(Verbs.trust).map { [TrustedKey(path: $0, text: try KeyFiles.read($0))] } ?? []
        let report =
            FileSystem.isDirectory(path)
            ? try ImageVerifier.verifyFolder(path, hashContents: false, trusted: trusted)
            : try ImageVerifier.verifyPacked(path, trusted: trusted)
        let manifest = report.manifest
        let signature =
            !report.signed
            ? "unsigned"
            : trusted.isEmpty
                ? "signed (no key given to check it)"
                : report.problems.contains { $0.kind == .signature } ? "signature INVALID" : "signed, verified with \(trusted[0].path)"
        let language = arguments.option(Verbs.lang) ?? manifest.language
        if terminal.json {
            terminal.record(
                InspectRecord(
                    format: manifest.format, name: manifest.name, imageID: manifest.imageID, catalog: manifest.catalog,
                    mapVersion: manifest.mapVersion.rawValue, built: manifest.built, mappackVersion: manifest.mappackVersion,
                    blockSize: manifest.blockSize, bundles: manifest.bundles.count, files: manifest.files.count, signature: signature,
                    problems: report.problems.count,
                    regions: manifest.regions.map {
                        InspectRecord.Region(
                            id: $0.id.rawValue, name: LocalizedNames.pick($0.names, language: language, fallback: $0.id.rawValue),
                            sizeOnDiskInBytes: $0.sizeOnDiskInBytes)
                    },
                    cacheSeed: manifest.cacheSeed.map {
                        InspectRecord.CacheSeed(entries: $0.entries, size: $0.size, sha256: $0.sha256.hex, regions: $0.regions.map(\.rawValue))
                    }))
        } else {
            terminal.line("image \(manifest.name.visible) — \(manifest.format.visible), id \(manifest.imageID.visible)")
            terminal.line(
                "catalog \(manifest.catalog.visible), map version \(manifest.mapVersion.rawValue.visible), built \(manifest.built.visible) "
                    + "by mappack \(manifest.mappackVersion.visible)")
            terminal.line("block size \(manifest.blockSize), \(manifest.bundles.count) bundles, \(manifest.files.count) files, \(signature)")
            let width = min(50, manifest.regions.map { $0.id.rawValue.visible.count }.max() ?? 10)
            for region in manifest.regions {
                let name = LocalizedNames.pick(region.names, language: language, fallback: region.id.rawValue)
                terminal.line(
                    "  \(region.id.rawValue.visible.rightPadded(width))  \(ByteCount.format(region.sizeOnDiskInBytes).leftPadded(10))  \(name.visible)"
                )
            }
            if let seed = manifest.cacheSeed {
                terminal.line(
                    "cache seed: \(seed.entries) entries, \(ByteCount.format(seed.size)), regions \(seed.regions.map(\.rawValue).joined(separator: ", "))"
                )
            } else {
                terminal.line("cache seed: none")
            }
            for problem in report.problems { terminal.error(problem.description) }
        }
        try ReportFiles.write(SizeReport(manifest: manifest, language: language), arguments: arguments, terminal: terminal)
        return ExitCode(ok: report.ok)
    }
}
