import Foundation
import MapFormat
import MapIO

/// Fetches bundles into the download cache, verifying each byte against its digest while it streams.
package struct BundleFetcher: Sendable {
    /// Where verified bundles go.
    package let cache: DownloadCache
    /// Transfers in flight at once.
    package let jobs: Int

    /// A fetcher over `cache` with `jobs` parallel transfers.
    package init(cache: DownloadCache, jobs: Int) {
        self.cache = cache
        self.jobs = max(1, jobs)
    }

    /// Makes sure every requested bundle is verified in the cache; returns each bundle's cache path.
    package func fetch(_ requests: [FetchRequest], events: @escaping @Sendable (FetchEvent) -> Void) async throws(FetchError) -> [BundleDigest: String] {
        var paths: [BundleDigest: String] = [:]
        for request in requests {
            if cache.contains(request.digest) {
                events(.alreadyCached(request.digest, size: request.size))
            } else {
                events(.started(request.digest, size: request.size))
                try fetchOne(request)
                events(.verified(request.digest, size: request.size))
            }
            paths[request.digest] = cache.path(for: request.digest)
        }
        return paths
    }

    private func fetchOne(_ request: FetchRequest) throws(FetchError) {
        func fail(_ reason: FetchError.Reason) -> FetchError {
            FetchError(bundle: request.digest, url: request.url, regions: request.regions, reason: reason, attempts: 1)
        }
        let partial = cache.partialPath(for: request.digest)
        let output: WritableFile
        do {
            try FileSystem.makeDirectories(FileSystem.parent(partial))
            output = try WritableFile(path: partial)
        } catch { throw fail(.local(error)) }
        let hasher = SHA256()
        var received: Int64 = 0
        var writeError: FileError?
        let outcome = CurlTransfer().get(request.url) { chunk in
            received += Int64(chunk.count)
            if received > request.size { return false }
            hasher.update(chunk)
            do throws(FileError) { try output.write(chunk) } catch { writeError = error; return false }
            return true
        }
        if let writeError { throw fail(.local(writeError)) }
        if received > request.size { try? FileSystem.removeFile(partial); throw fail(.tooLarge(received: received)) }
        if outcome.status >= 400 { throw fail(.httpStatus(outcome.status)) }
        if let message = outcome.error { throw fail(.transport(message)) }
        if received < request.size { throw fail(.truncated(received: received)) }
        let actual = hasher.finalizeHex()
        if actual != request.digest.hex { try? FileSystem.removeFile(partial); throw fail(.digestMismatch(actual: actual)) }
        do {
            try output.close(sync: true)
            try cache.admit(verifiedFile: partial, digest: request.digest)
        } catch { throw fail(.local(error)) }
    }
}
