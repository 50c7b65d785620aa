import Foundation
import MapFormat
import MapIO
import MapVerify

/// The manifest kept in the storage, checked against its own bytes, the state's record and its signature.
extension StoreCore {
    /// The kept manifest with its bytes and its own problems.
    func keptManifest() throws -> KeptManifest {
        let path = keptManifestPath
        let data = try ReadableFile.contents(of: path, limit: ImageVerifier.maxManifestBytes)
        let (manifest, problems) = try ImageVerifier.readManifest(data, file: path)
        return KeptManifest(manifest: manifest, bytes: data, problems: problems)
    }

    /// What is wrong with the kept manifest and the state's record of it: its own problems, an image id
    /// or map version the state does not record, and with trusted keys and `signature`, a kept
    /// `manifest.sig` that does not verify (or none, for a store installed from an unsigned image).
    func keptManifestProblems(_ kept: KeptManifest, signature: Bool) throws -> [StoreProblem] {
        var problems = kept.problems.map { problem in
            problem.kind == .imageIDMismatch
                ? StoreProblem(
                    kind: .init(problem.kind), path: problem.path, regions: [],
                    detail: "the kept manifest's image id \(kept.manifest.imageID.prefix(16)) does not match its content; it was edited after install"
                )
                : StoreProblem(problem)
        }
        guard let state else { return problems }
        let stateFile = StoreLayout.stateFileName
        if let recorded = try state.imageID, recorded != kept.manifest.imageID {
            problems.append(
                StoreProblem(
                    kind: .imageIDMismatch, path: stateFile, regions: [],
                    detail: "the state records image \(recorded.prefix(16)) but the kept manifest is image \(kept.manifest.imageID.prefix(16))"))
        }
        if let recorded = try state.mapVersion, recorded != kept.manifest.mapVersion {
            problems.append(
                StoreProblem(
                    kind: .mapVersionMismatch, path: stateFile, regions: [],
                    detail: "the state records mapVersion \(recorded) but the kept manifest is map version \(kept.manifest.mapVersion)"))
        }
        if signature, !trustedKeys.isEmpty {
            switch try state.meta(.signature) {
            case StateDatabase.signatureKept?:
                let signature = try? ReadableFile.contents(of: keptSignaturePath, limit: 4096)
                let problem: VerifyProblem?
                do { problem = try ImageVerifier.checkSignature(manifestBytes: kept.bytes, signature: signature, trusted: trustedKeys) } catch {
                    throw MapStoreError.io(operation: "checking the kept manifest's signature", path: keptSignaturePath, reason: error.description)
                }
                if let problem {
                    problems.append(
                        StoreProblem(kind: .init(problem.kind), path: problem.path, regions: [], detail: "kept manifest: " + problem.detail))
                }
            case StateDatabase.signatureNone?:
                problems.append(
                    StoreProblem(
                        kind: .signature, path: ImageManifest.signatureFileName, regions: [],
                        detail: "the store was installed from an unsigned image; no trusted key vouches for it"))
            default:
                break
            }
        }
        return problems
    }
}
