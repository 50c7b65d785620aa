/// The keys of `state.sqlite`'s `meta` table, declared once: a key is a case, so a misspelt one does not compile.
package enum StateMetaKey: String, CaseIterable, Sendable {
    /// The state's format (`StateDatabase.format`).
    case format
    /// The installed image's id and map version (absent before the first install commits).
    case imageID, mapVersion
    /// The image's language (names fall back to it) and when it was installed.
    case language, installed
    /// The kept manifest's facts region listings need (so they need not decode it).
    case blockSize
    case catalogName = "catalog"
    /// The offered image folder's manifest identity and map version (`StoreCore.offeredFolderVersion`).
    case offeredManifest
    /// An in-place store's base (`Options.useImageInPlace`): the image folder its files are read from
    /// where they lie, that folder's manifest id, and the manifest's fingerprint when the id was last
    /// read (`StoreCore.baseFingerprint`). Absent in a store that copied its image.
    case baseImage, baseImageID, baseManifest
    /// Whether the kept manifest carries the image's signature (`StateDatabase.signatureKept` / `signatureNone`).
    case signature
    /// The catalog the installed data comes from: downloads, repair's fetches and listings resolve its
    /// bundle URLs against it. Set at open, by `setCatalogURL` with a catalog of the installed version,
    /// and by an update's commit; never by a check. (Stored as `catalogURL`, its name before checks kept
    /// their catalog apart.)
    case installedCatalogURL = "catalogURL"
    /// The catalog the last check (or `setCatalogURL` of another version) looked at: what the next
    /// check or update reads when the app names none. Nothing resolves bundles against it.
    case checkedCatalogURL
    /// The installed version's support window (`Catalog.supportedUntil`), empty when it has none.
    case supportedUntil
    /// The kept manifest file's identity (device, inode, size, times) when it was last found to be the
    /// image the state records, so that open compares one `lstat` (`StoreCore.keptManifestMatchesState`).
    case keptManifest
    /// The catalog tables' step (`StateDatabase.makeSchema`): present once a store holds them.
    case catalogsSchema
}
