import Foundation

/// Encodes and decodes mappack's JSON: UTF-8, sorted keys, no insignificant whitespace,
/// so the same value always gives the same bytes (and so the same hashes).
public enum CanonicalJSON {
    /// Canonical bytes of `value`.
    public static func encode<T: Encodable>(_ value: T) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    /// Decodes `data`, turning Foundation's errors into a `JSONFileError` naming `file`. A key repeated
    /// within one object is refused (Foundation keeps one of them silently; other readers may keep the other).
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data, file: String) throws -> T {
        if let (key, _) = JSONScanner.firstDuplicateKey(in: data) {
            throw JSONFileError(
                file: file, codingPath: key, reason: "the key \"\(key)\" appears twice in one object; readers would disagree on its value")
        }
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch let error as DecodingError {
            throw JSONFileError(file: file, error: error, data: data)
        }
    }
}
