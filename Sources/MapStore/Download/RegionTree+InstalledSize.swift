import MapFormat

/// Space regions take once installed, as `RegionDetails.sizeOnDiskInBytes` reports it.
extension RegionTree {
    /// Allocated bytes of `bundles` at `blockSize`, each counted once: the catalog's declared size on
    /// disk for that block size (what `mappack plan` sums), else its unpacked size rounded up to whole
    /// blocks (a floor: it counts the files as one).
    func installedSizeOnDisk(_ bundles: Set<BundleDigest>, blockSize: Int64) -> Int64 {
        bundles.reduce(Int64(0)) { total, digest in
            guard let info = catalog.bundles[digest] else { return total }
            return total + (info.sizeOnDisk(blockSize: blockSize) ?? SizeOnDisk.allocated(size: info.unpackedSize, blockSize: blockSize))
        }
    }
}

extension ImageManifest {
    /// Allocated bytes of the installed files of `id` and the manifest's regions below it, each
    /// bundle's files once (for an installed region the kept catalog does not list).
    func installedSizeOnDisk(of id: RegionID) -> Int64 {
        var members: Set<RegionID> = [id]
        var grew = true
        while grew {
            grew = false
            for region in regions where !members.contains(region.id) {
                if let parent = region.parent, members.contains(parent) {
                    members.insert(region.id)
                    grew = true
                }
            }
        }
        let bundles = Set(regions.filter { members.contains($0.id) }.flatMap(\.bundles))
        return files.filter { bundles.contains($0.bundle) }.reduce(Int64(0)) { $0 + SizeOnDisk.allocated(size: $1.size, blockSize: blockSize) }
    }
}
