import Foundation
import MapFetch
import MapFormat
import MapIO

/// Fetches one bundle by digest for `repair()`, synchronously (repair runs under the store's lock and
/// from the synchronous CLI): a plain GET (or a copy for `file://`), hashed on the way, never more
/// bytes than the declared size, admitted into the download cache only when size and SHA-256 match.
struct RepairFetcher {
    /// False when the network policy forbids the current network.
    var permitted: Bool
    /// Attempts per bundle.
    var attempts: Int
    /// Seconds before the first retry; doubles each failure.
    var retryDelay: Double

    /// The verified archive of `digest` (`size` bytes) fetched from `url` into `cache`; `scratch` is a
    /// folder of this repair for the file being written. Failures are `MapStoreError.remote` or `.local`.
    func fetch(_ digest: BundleDigest, size: Int64, from url: URL, into cache: DownloadCache, scratch: String) throws -> String {
        guard permitted else { throw MapStoreError.meteredNetworkDisallowed(regions: []) }
        let temporary = scratch + "/" + digest.hex + ".part"
        var lastFailure: MapStoreError?
        var delay = retryDelay
        for attempt in 0..<max(1, attempts) {
            if attempt > 0 {
                usleep(UInt32(min(delay, 30) * 1_000_000))
                delay *= 2
            }
            do {
                try FileSystem.makeDirectories(scratch)
                try FileSystem.removeFile(temporary)
                let (hex, got) =
                    url.isFileURL ? try SHA256.copyFile(url.path, to: temporary) : try get(url, to: temporary, limit: size, digest: digest)
                guard got == size, hex == digest.hex else {
                    try? FileSystem.removeFile(temporary)
                    throw MapStoreError.remote(
                        url: url.absoluteString, httpStatus: nil, regions: [], bundle: digest,
                        reason: "the bundle has \(got) bytes with SHA-256 \(hex.prefix(16)), the manifest says \(size) bytes with \(digest.short)")
                }
                try cache.admit(verifiedFile: temporary, digest: digest)
                return cache.path(for: digest)
            } catch let error as MapStoreError {
                lastFailure = error
            } catch let error as FileError {
                // This device's side: retrying does not help.
                throw MapStoreError.local(path: error.path, errno: error.code, regions: [], bundle: digest, reason: error.description)
            }
        }
        throw lastFailure ?? MapStoreError.remote(url: url.absoluteString, httpStatus: nil, regions: [], bundle: digest, reason: "not fetched")
    }

    /// GETs `url` into the new file `path`, hashing it; refuses more than `limit` bytes.
    private func get(_ url: URL, to path: String, limit: Int64, digest: BundleDigest) throws -> (hex: String, size: Int64) {
        let file = try WritableFile(path: path, exclusive: true)
        let hasher = SHA256()
        var written: Int64 = 0
        var writeFailure: FileError?
        // libcurl's chunk, valid for the call only: hashed and written before the closure returns.
        let outcome = unsafe CurlTransfer().get(url) { chunk in
            written += Int64(chunk.count)
            guard written <= limit else { return false }
            unsafe hasher.update(chunk)
            do throws(FileError) { try unsafe file.write(chunk) } catch {
                writeFailure = error
                return false
            }
            return true
        }
        try file.close(sync: false)
        if let writeFailure { throw writeFailure }
        if written > limit {
            throw MapStoreError.remote(
                url: url.absoluteString, httpStatus: outcome.status, regions: [], bundle: digest,
                reason: "the server sent more than the manifest's \(limit) bytes")
        }
        if let error = outcome.error, !outcome.aborted {
            throw MapStoreError.remote(
                url: url.absoluteString, httpStatus: outcome.status == 0 ? nil : outcome.status, regions: [], bundle: digest, reason: error)
        }
        guard outcome.status == 200 else {
            throw MapStoreError.remote(
                url: url.absoluteString, httpStatus: outcome.status, regions: [], bundle: digest, reason: "HTTP status \(outcome.status)")
        }
        return (hasher.finalizeHex(), written)
    }
}
