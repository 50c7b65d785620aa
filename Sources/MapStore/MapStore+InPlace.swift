import Foundation
import MapFormat

/// Stores that use their image in place (`Options.useImageInPlace`).
extension MapStore {
    /// The read-only image folder this store reads in place (its base), a file URL; nil for a store
    /// that copied its image. Region sizes count the base's files where they lie: deleting a region read
    /// from the base hides it and frees nothing there; only what the device wrote (downloads, updates,
    /// repairs) takes room in the storage folder. Each region says which (`InstalledRegion.bytesLocation`,
    /// `freedByDeletingInBytes`).
    public var baseImage: URL? {
        guard let store = snapshot.baseStoreFolder else { return nil }
        return URL(fileURLWithPath: String(store.dropLast(ImageManifestStoreSuffix.length)), isDirectory: true)
    }
}

/// The `/store` ending of a base's store tree.
private enum ImageManifestStoreSuffix {
    static let length = ("/" + ImageManifest.storeFolder).count
}
