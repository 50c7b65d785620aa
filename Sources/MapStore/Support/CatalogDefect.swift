import Foundation

/// What makes a catalog a store read unusable (`MapStoreError.invalidCatalog`).
public enum CatalogDefect: Sendable, Equatable, CustomStringConvertible {
    /// The catalog's content is no catalog a store can use: malformed JSON, sizes that overflow,
    /// names that are no plain names, … (the reader's message).
    case content(String)
    /// The catalog's compressed copy (`catalog.json.zst`, the error's URL) does not decompress, or
    /// decompresses to more than its timestamp names (the decompressor's message).
    case compressedCopy(String)

    /// The reader's or the decompressor's message.
    public var description: String {
        switch self {
        case .content(let reason), .compressedCopy(let reason): reason
        }
    }
}
