// The members of `catalog.json` (`mappack-catalog/1`) and of its signature `catalog.json.sig`
// (`mappack-catalog-sig/1`), declared once; see `JSONField`.

extension Catalog {
    /// The top-level members.
    package enum Field: String, JSONField {
        case format, catalog, mapVersion, released, supportedUntil, regions, bundles

        static let table = JSONFieldTable<Field>()
    }
}

extension CatalogRegion {
    /// The members of an element of `regions`.
    package enum Field: String, JSONField {
        case id, parent, names, center, bbox, bundles, cities, released

        static let table = JSONFieldTable<Field>()
    }
}

extension BundleInfo {
    /// The members of a value of `bundles` (keyed by digest).
    package enum Field: String, JSONField {
        case url, size, unpackedSize, files, kind, sizeOnDisk, chunked

        static let table = JSONFieldTable<Field>()
    }
}

extension ChunkedBundle {
    /// The members of a bundle's `chunked` value (issue 21).
    package enum Field: String, JSONField {
        case url, size, headerSize, headerSHA256, chunkSize, minChunk, maxChunk, normalization, level, sqlitePages

        static let table = JSONFieldTable<Field>()
    }
}

extension CatalogSignature {
    /// The members of `catalog.json.sig`; all but `signature` are signed (`signedBytes`).
    package enum Field: String, JSONField {
        case format, catalog, version, epoch, expires, sha256, nextKey, keyID, signature, cosignature
    }
}

extension CatalogTimestamp {
    /// The members of `catalog.json.timestamp`; all but `signature` are signed (`signedBytes`).
    package enum Field: String, JSONField {
        case format, catalog, version, epoch, timestampVersion, expires, sha256, size, zstSHA256, zstSize, keyID, signature
    }
}
