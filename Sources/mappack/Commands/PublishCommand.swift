import Foundation
import MapBuild
import MapFormat
import MapIO
import Synchronization

/// `mappack publish SOURCE --out DIR [--previous DIR] [--sign KEY [--catalog-version N] [--expires 14d] [--next-key PUB]]`.
enum PublishCommand {
    static func run(_ raw: [String], terminal: Terminal) async throws -> ExitCode {
        let arguments = try Arguments(raw, verb: Verbs.publish)
        let source = try arguments.expect(["source_dir"])[0]
        guard let given = arguments.option(Verbs.out) else { throw UsageError(message: "publish needs --out DIR") }
        let out = try Arguments.outputFolder(given, option: Verbs.out)
        let jobs = try arguments.int(Verbs.jobs, range: 1...256) ?? ProcessInfo.processInfo.activeProcessorCount
        var publisher = Publisher(source: source, output: out, jobs: jobs)
        publisher.signing = try signing(arguments)
        publisher.chunked = arguments.flag(Verbs.Publish.chunked)
        // Versions of a catalog are published over one folder, so the version there is the previous one.
        if let previous = arguments.option(Verbs.Publish.previous) {
            publisher.previous = previous
        } else if FileSystem.exists(out + "/catalog.json") {
            publisher.previous = out
            publisher.previousIsImplicit = true
        }
        publisher.notice = { terminal.note("publish: " + $0) }
        // Packing a big world takes a while: say which phase it is in and how far.
        let state = Mutex((phase: "", done: 0, total: 0, started: Date()))
        let ticker = ProgressTicker(terminal: terminal) {
            state.withLock { state in
                state.phase == "pack"
                    ? "pack \(state.done)/\(state.total) bundles · \(Int(Date().timeIntervalSince(state.started))) s"
                    : state.phase.isEmpty
                        ? nil : "catalog: \(state.done) regions, \(state.total) bundles · \(Int(Date().timeIntervalSince(state.started))) s"
            }
        }
        publisher.progress = { phase, done, total in
            let entered = state.withLock { state -> Bool in
                defer { (state.phase, state.done, state.total) = (phase, done, total) }
                guard state.phase != phase else { return false }
                state.started = Date()
                return true
            }
            if terminal.json {
                if entered { terminal.event(PhaseEvent(phase: phase)) }
                if phase == "pack" { terminal.event(PublishProgressEvent(bundles: done, total: total)) }
            } else if entered {
                ticker.started(phase == "pack" ? "pack: \(total) bundles from \(source)" : "catalog: \(done) regions, \(total) bundles → \(out)")
            } else {
                ticker.update("pack \(done)/\(total) bundles")
            }
        }
        let result: Publisher.Result
        do { result = try await publisher.run() } catch {
            ticker.finish()
            throw error
        }
        ticker.finish()
        if terminal.json {
            terminal.event(
                PublishedEvent(
                    catalog: result.catalogPath, regions: result.regions, bundles: result.bundles, bytes: result.bytes,
                    catalogVersion: result.signedVersion.map { Int($0) }, reused: result.reused))
        } else {
            terminal.line(
                "published \(result.regions) regions, \(result.bundles) bundles (\(result.bytes) bytes) → \(result.catalogPath)"
                    + (result.signedVersion.map { ", signed as version \($0)" } ?? "")
                    + (result.reused > 0 ? "; \(result.reused) bundles unchanged, copied from \(publisher.previous ?? "")" : ""))
        }
        return .success
    }

    /// The catalog signing options; nil without `--sign` (the other signing options need it).
    private static func signing(_ arguments: Arguments) throws -> CatalogSigning? {
        guard let keyPath = arguments.option(Verbs.sign) else {
            for option in Verbs.Publish.signing where arguments.option(option) != nil {
                throw UsageError(message: "--\(option.name) needs --sign KEY (it describes the catalog's signature)")
            }
            return nil
        }
        var signing = CatalogSigning(privateKey: try KeyFiles.read(keyPath), keyPath: keyPath, clock: try CommandClock.build())
        if let text = arguments.option(Verbs.Publish.catalogVersion) {
            guard let version = Int64(text), version >= 0 else {
                throw UsageError(message: "--catalog-version must be a whole number ≥ 0, not '\(text)'")
            }
            guard version <= CatalogSignature.maxVersion else {
                throw UsageError(
                    message: "--catalog-version \(version) is above \(CatalogSignature.maxVersion), the largest version devices accept (2^53 - 1)")
            }
            signing.version = version
        }
        signing.force = arguments.flag(Verbs.Publish.force)
        if let text = arguments.option(Verbs.Publish.expires) {
            guard let seconds = CatalogSigning.duration(text) else {
                throw UsageError(message: "--expires must be hours or days like 36h or 14d (at most 3650d), not '\(text)'")
            }
            signing.validFor = seconds
        }
        if let text = arguments.option(Verbs.Publish.timestampExpires) {
            guard let seconds = CatalogSigning.duration(text) else {
                throw UsageError(message: "--timestamp-expires must be hours or days like 6h or 2d (at most 3650d), not '\(text)'")
            }
            signing.timestampValidFor = seconds
        }
        guard signing.clock.addingTimeInterval(signing.validFor) <= UTCTime.latest else {
            throw UsageError(
                message: "the signature would expire after year 9999 (the clock \(UTCTime.format(signing.clock) ?? "?") plus --expires "
                    + "\(arguments.option(Verbs.Publish.expires) ?? "30d")); an expiry is a four-digit year: lower SOURCE_DATE_EPOCH or --expires")
        }
        if let path = arguments.option(Verbs.Publish.nextKey) {
            let text = try KeyFiles.read(path)
            do { _ = try Ed25519.rawPublicKey(text, path: path) } catch { throw UsageError(message: "--next-key: \(error)") }
            signing.nextKey = text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        if let path = arguments.option(Verbs.Publish.resetLineage) {
            guard signing.nextKey == nil else {
                throw UsageError(message: "--reset-lineage names the next key itself (its public half); leave out --next-key")
            }
            let text = try KeyFiles.read(path)
            do { _ = try Ed25519.publicKey(ofPrivate: text, path: path) } catch {
                throw UsageError(message: "--reset-lineage needs the new private key (mappack keygen's .key): \(error)")
            }
            signing.reset = (privateKey: text, path: path)
        }
        return signing
    }
}
