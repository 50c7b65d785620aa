import MapFetch
import MapFormat
import Synchronization

/// An update's bytes per installed region: each region's total is the size of the bundles it needs
/// that the device lacks; a bundle two regions share counts for both.
final class UpdateRegionProgress: Sendable {
    private let bundles: [RegionID: Set<BundleDigest>]
    private let sizes: [BundleDigest: Int64]
    private let received = Mutex<[BundleDigest: Int64]>([:])

    /// `onDevice`: bytes of each bundle already in the download cache (a resumed update starts from them,
    /// so a region's count never drops below what an earlier run reported).
    init(_ requests: [FetchRequest], onDevice: [BundleDigest: Int64]) {
        var bundles: [RegionID: Set<BundleDigest>] = [:]
        for request in requests { for region in request.regions { bundles[region, default: []].insert(request.digest) } }
        self.bundles = bundles
        sizes = Dictionary(requests.map { ($0.digest, $0.size) }, uniquingKeysWith: { first, _ in first })
        received.withLock { $0 = onDevice }
    }

    /// Every region's (region, received, total) now.
    func all() -> [(RegionID, Int64, Int64)] {
        received.withLock { map in totals(bundles.keys.sorted(), map) }
    }

    private func totals(_ regions: [RegionID], _ map: [BundleDigest: Int64]) -> [(RegionID, Int64, Int64)] {
        regions.map { region in
            let digests = bundles[region] ?? []
            return (region, digests.reduce(0) { $0 + min(map[$1] ?? 0, sizes[$1] ?? 0) }, digests.reduce(0) { $0 + (sizes[$1] ?? 0) })
        }
    }

    /// Takes in a fetch event; returns (region, received, total) for each region the event's bundle belongs to.
    func record(_ event: FetchEvent) -> [(RegionID, Int64, Int64)] {
        let update: (BundleDigest, Int64)?
        switch event {
        case .progress(let digest, let bytes, _): update = (digest, bytes)
        case .verified(let digest, let size), .alreadyCached(let digest, let size): update = (digest, size)
        default: update = nil
        }
        guard let (digest, bytes) = update else { return [] }
        return received.withLock { map in
            // A bundle's count never goes back (a retry restarts a transfer; the bytes kept still count).
            map[digest] = max(map[digest] ?? 0, bytes)
            return totals(bundles.filter { $0.value.contains(digest) }.map(\.key).sorted(), map)
        }
    }
}
