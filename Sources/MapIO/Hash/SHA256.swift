import CCrypto
import Foundation
import MapFormat

/// Streaming SHA-256 over libcrypto's EVP interface (`EVP_DigestInit_ex2`, `EVP_DigestUpdate`, `EVP_DigestFinal_ex`).
@safe package final class SHA256 {
    private let context: OpaquePointer

    /// The algorithm, fetched from the default provider once (`EVP_MD_fetch`): initialising with
    /// `EVP_sha256()` fetches it again on every digest, which costs more than hashing a small file.
    /// `nonisolated(unsafe)`: an `OpaquePointer` is not `Sendable`, but the fetched `EVP_MD` never
    /// changes and libcrypto lets threads share it.
    private nonisolated(unsafe) static let algorithm: OpaquePointer = unsafe EVP_MD_fetch(nil, "SHA256", nil) ?? EVP_sha256()

    /// Starts a new digest.
    package init() {
        unsafe context = EVP_MD_CTX_new()
        unsafe EVP_DigestInit_ex2(context, SHA256.algorithm, nil)
    }

    deinit { unsafe EVP_MD_CTX_free(context) }

    /// Starts over for a new digest in the same context (no allocation), after a `finalize`.
    package func reset() {
        unsafe EVP_DigestInit_ex2(context, SHA256.algorithm, nil)
    }

    /// Feeds bytes.
    package func update(_ bytes: UnsafeRawBufferPointer) {
        if bytes.count > 0 { unsafe EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) }
    }

    /// Feeds bytes.
    package func update(_ data: Data) { unsafe data.withUnsafeBytes { unsafe update($0) } }

    /// Feeds bytes.
    package func update(_ bytes: RawSpan) { unsafe bytes.withUnsafeBytes { unsafe update($0) } }

    /// The lower-case hex digest; call once (or once after each `reset`).
    package func finalizeHex() -> String { finalize().hex }

    /// The digest; call once (or once after each `reset`).
    package func finalize() -> SHA256Digest {
        var bytes: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        var length: UInt32 = 0
        unsafe withUnsafeMutableBytes(of: &bytes) { raw in
            _ = unsafe EVP_DigestFinal_ex(context, raw.baseAddress!.assumingMemoryBound(to: UInt8.self), &length)
        }
        return SHA256Digest(bytes: bytes)
    }

    /// Hex SHA-256 of `data`.
    package static func hex(_ data: Data) -> String {
        let hasher = SHA256()
        hasher.update(data)
        return hasher.finalizeHex()
    }

    /// SHA-256 of `data`.
    package static func digest(_ data: Data) -> SHA256Digest {
        let hasher = SHA256()
        hasher.update(data)
        return hasher.finalize()
    }
}

extension SHA256 {
    /// The linked libcrypto's version (`OpenSSL_version`).
    package static var libraryVersion: String { unsafe String(cString: OpenSSL_version(0)) }
}
