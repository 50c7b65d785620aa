import Foundation

// The members of `manifest.json` (`mappack-image/1`), declared once; see `JSONField`. Cases are
// in canonical (sorted) order, the order the file is written in, so readers match early.

extension ImageManifest {
    /// The top-level members.
    package enum Field: String, JSONField {
        case blockSize, built, bundles, cacheSeed, catalog, files, format, imageID, language, mapVersion, mappackVersion, name, regions

        static let table = JSONFieldTable<Field>()

        /// `"<key>":` as canonical bytes spell a member's start.
        package var memberStart: Data { Data("\"\(rawValue)\":".utf8) }

        /// `"<key>":[`, where a list member's elements start.
        package var listStart: Data { memberStart + Data("[".utf8) }

        /// `"<key>":[]`, an empty list member as canonical bytes spell it.
        package var emptyList: Data { listStart + Data("]".utf8) }

        /// `"imageID":"`, where the id's digits start.
        package static var idFieldStart: Data { imageID.memberStart + Data("\"".utf8) }

        /// `"imageID":"<id>"` as it appears in canonical bytes.
        package static func idField(_ id: String) -> Data { idFieldStart + Data("\(id)\"".utf8) }
    }

    /// The image id a manifest's bytes name, found without decoding them: the text of the first
    /// `"imageID":"…"` member (inside a JSON string every quote is escaped, so only a member matches).
    /// Nil when there is none or it is not a short run of plain characters.
    package static func idInCanonicalBytes(_ data: Data) -> String? {
        guard let start = data.range(of: Field.idFieldStart)?.upperBound else { return nil }
        let rest = data[start..<min(data.endIndex, start + 129)]
        guard let end = rest.firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        let id = rest[start..<end]
        guard !id.contains(UInt8(ascii: "\\")) else { return nil }
        return String(decoding: id, as: UTF8.self)
    }
}

extension ImageRegion {
    /// The members of an element of `regions`.
    package enum Field: String, JSONField {
        case bbox, bundles, center, cities, id, name, names, parent, released, sizeOnDiskInBytes

        static let table = JSONFieldTable<Field>()
    }
}

extension ImageBundle {
    /// The members of an element of `bundles`.
    package enum Field: String, JSONField {
        case digest, files, size, unpackedSize, url

        static let table = JSONFieldTable<Field>()
    }
}

extension ImageFile {
    /// The members of an element of `files`, the hot path of every manifest reader and writer.
    @usableFromInline package enum Field: String, JSONField {
        case bundle, path, sha256, size

        static let table = JSONFieldTable<Field>()

        /// An entry as canonical bytes spell it is `entryOpening` + bundle digest (`sha256:…`) +
        /// `afterBundle` + path + `afterPath` + sha256 + `afterSHA256` + size + `}`: keys sorted,
        /// strings unescaped (`ImageManifest.appendFileEntry`, `ManifestStream`).
        @usableFromInline package static let entryOpening = Array("{\"\(bundle.rawValue)\":\"".utf8)
        @usableFromInline package static let afterBundle = Array("\",\"\(path.rawValue)\":\"".utf8)
        @usableFromInline package static let afterPath = Array("\",\"\(sha256.rawValue)\":\"".utf8)
        @usableFromInline package static let afterSHA256 = Array("\",\"\(size.rawValue)\":".utf8)
    }
}

extension ImageCacheSeed {
    /// The members of `cacheSeed`.
    package enum Field: String, JSONField {
        case entries, regions, sha256, size

        static let table = JSONFieldTable<Field>()
    }
}
