/// Where an installed region's bytes are (`InstalledRegion.bytesLocation`): in the storage folder, in
/// the read-only base of an in-place store (`MapStore.Options.useImageInPlace`), or in both, the
/// storage's copies winning (a base region updated or repaired on the device).
public enum RegionBytesLocation: String, Sendable, Equatable, CaseIterable {
    /// Every file is in the storage folder (a store that copied its image; a downloaded region).
    case storage
    /// Every file is read from the base where it lies: deleting the region hides it and frees nothing.
    case base
    /// Some files are the base's, others the storage's copies, which are read instead of the base's.
    case baseAndStorage
}
