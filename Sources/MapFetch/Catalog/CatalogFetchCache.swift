import Foundation
import MapIO

/// The last catalog fetched from one URL, with its signature, its timestamp and the validators each
/// came with: `<folder>/<first 32 hex digits of the URL's SHA-256>/`. A device keeps it in its
/// storage's `catalog-fetch/`, a build machine in `<download cache>/catalogs/`. Only what a later
/// check compares against is kept; trust is decided each time by the caller, never by the cache.
struct CatalogFetchCache {
    /// The entry's folder.
    let folder: String

    /// The documents kept.
    enum Document: String, CaseIterable {
        case catalog = "catalog.json"
        case signature = "catalog.json.sig"
        case timestamp = "catalog.json.timestamp"
    }

    /// What the entry knows beside the bytes: the validators per document, and the catalog version the
    /// kept catalog was fetched for (a re-signed catalog with the same bytes is fetched again with its signature).
    struct Record: Codable, Equatable {
        var validators: [String: HTTPValidators] = [:]
        var catalogVersion: Int64?
    }

    init(root: String, url: URL) {
        folder = root + "/" + SHA256.hex(Data(url.absoluteString.utf8)).prefix(32)
    }

    private var recordPath: String { folder + "/record.json" }

    /// The record; empty when none (or a damaged one: the cache is then rebuilt by plain requests).
    func record() -> Record {
        guard let data = try? ReadableFile.contents(of: recordPath, limit: 1 << 16) else { return Record() }
        return (try? JSONDecoder().decode(Record.self, from: data)) ?? Record()
    }

    /// A kept document's bytes.
    func read(_ document: Document, limit: Int) -> Data? {
        try? ReadableFile.contents(of: folder + "/" + document.rawValue, limit: limit)
    }

    /// `store`, unless it would write what is kept already: the record is `previous` (as read), no
    /// document came over the wire (`fresh`: a `304` vouches that the kept bytes are current), and no
    /// document to remove is here. An unchanged check then writes and syncs nothing (a no-op build
    /// rewrote its whole catalog and four fsyncs each time, issue 34).
    func store(_ documents: [Document: Data?], record: Record, unlessUnchangedFrom previous: Record, fresh: Set<Document>) {
        let unchanged =
            record == previous
            && documents.allSatisfy { document, bytes in
                bytes == nil ? !FileSystem.exists(folder + "/" + document.rawValue) : !fresh.contains(document)
            }
        if !unchanged { store(documents, record: record) }
    }

    /// Replaces the kept documents (nil removes one) and then the record: the record goes last, so an
    /// interrupted write never pairs validators with other bytes (it only costs a full fetch next time).
    func store(_ documents: [Document: Data?], record: Record) {
        do {
            try FileSystem.makeDirectories(folder)
            try? FileSystem.removeFile(recordPath)
            for (document, bytes) in documents {
                let path = folder + "/" + document.rawValue
                if let bytes { try FileSystem.writeAtomically(bytes, to: path) } else { try? FileSystem.removeFile(path) }
            }
            try FileSystem.writeAtomically(try JSONEncoder().encode(record), to: recordPath)
        } catch {
            // A cache that cannot be written only makes the next check cost a full fetch.
            try? FileSystem.removeFile(recordPath)
        }
    }
}
