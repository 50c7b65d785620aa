import Foundation
import MapFetch
import MapFormat
import MapIO

/// Fetches one bundle by digest for `repair()` through the `FetchClient`: one GET (or a read for
/// `file://`), hashed on the way, never more bytes than the declared size, admitted into the
/// download cache only when size and SHA-256 match.
///
/// Repair runs under the store's lock, so the fetcher never waits there: a failure worth another
/// attempt (`FetchClient.retryDelay`) is a `RepairRetry`, and `MapStore.repair()` waits with the lock
/// let go, then repairs again.
struct RepairFetcher: Sendable {
    /// False when the network policy forbids the current network.
    var permitted: Bool
    /// The client, with the store's retry policy.
    var client: FetchClient
    /// Passes of this repair that already ended in a `RepairRetry`.
    var failures: Int

    /// The verified archive of `digest` (`size` bytes) fetched from `url` into `cache`; `scratch` is a
    /// folder of this repair for the file being written. Failures are `MapStoreError.remote` or
    /// `.local`, or `RepairRetry` when another attempt is worth it.
    func fetch(_ digest: BundleDigest, size: Int64, from url: URL, into cache: DownloadCache, scratch: String) throws -> String {
        guard permitted else { throw MapStoreError.meteredNetworkDisallowed(regions: []) }
        let temporary = scratch + "/" + digest.hex + ".part"
        do {
            try FileSystem.makeDirectories(scratch)
            try FileSystem.removeFile(temporary)
            let (actual, got) = try get(url, to: temporary, limit: size, digest: digest)
            guard got == size, actual == digest.sha256 else {
                try? FileSystem.removeFile(temporary)
                throw MapStoreError.remote(
                    url: url, httpStatus: nil, regions: [], bundle: digest,
                    reason: "the bundle has \(got) bytes with SHA-256 \(actual.hex.prefix(16)), the manifest says \(size) bytes with \(digest.short)")
            }
            try cache.admit(verifiedFile: temporary, digest: digest)
            return cache.path(for: digest)
        } catch let error as FileError {
            // This device's side: retrying does not help.
            throw MapStoreError.local(path: error.path, errno: error.code, regions: [], bundle: digest, reason: error.description)
        } catch let failure as FetchFailure {
            let error = Self.storeError(failure, url: url, digest: digest)
            if let delay = client.retryDelay(after: failure, failures: failures + 1) { throw RepairRetry(delay: delay, failure: error) }
            throw error
        }
    }

    /// GETs `url` into the new file `path`, hashing it; refuses more than `limit` bytes.
    private func get(_ url: URL, to path: String, limit: Int64, digest: BundleDigest) throws -> (digest: SHA256Digest, size: Int64) {
        let file = try WritableFile(path: path, exclusive: true)
        let hasher = SHA256()
        var written: Int64 = 0
        var writeFailure: FileError?
        let answer: FetchAnswer
        do {
            answer = try client.get(url, limit: limit) { chunk in
                hasher.update(chunk)
                do throws(FileError) { try file.write(chunk) } catch {
                    writeFailure = error
                    return false
                }
                written += Int64(chunk.byteCount)
                return true
            }
        } catch {
            try file.close(sync: false)
            if let writeFailure { throw writeFailure }
            throw error
        }
        try file.close(sync: false)
        guard case .body = answer else {
            if url.isFileURL { throw FileError(.open, url.path, code: ENOENT) }
            throw FetchFailure.status(url: url, httpStatus: 404, retryAfter: nil)
        }
        return (hasher.finalize(), written)
    }

    /// `failure` as the store says it.
    private static func storeError(_ failure: FetchFailure, url: URL, digest: BundleDigest) -> MapStoreError {
        if url.isFileURL { return .local(path: url.path, errno: nil, regions: [], bundle: digest, reason: failure.description) }
        let reason: String
        switch failure {
        case .tooLarge(_, let limit): reason = "the server sent more than the manifest's \(limit) bytes"
        case .status(_, let status, _): reason = "HTTP status \(status)"
        case .transfer(_, _, let message, _): reason = message
        case .stopped: reason = "stopped"
        }
        return .remote(url: url, httpStatus: failure.httpStatus, regions: [], bundle: digest, reason: reason)
    }
}

/// A repair pass under the store's lock stopped at a bundle fetch worth another attempt: the caller
/// waits `delay` seconds with the lock let go and repairs again. `actions` were taken by the pass.
struct RepairRetry: Error {
    /// Seconds to wait (the policy's backoff, or the server's `Retry-After`).
    var delay: Double
    /// The failure, thrown as it is when no attempt is left.
    var failure: MapStoreError
    /// What the pass did before it stopped.
    var actions: [RepairReport.Action] = []
}
