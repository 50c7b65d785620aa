import CCrypto
import Foundation

/// Why a key or signature could not be used.
package enum SignatureError: Error, Equatable, Sendable, CustomStringConvertible {
    case malformedKey(path: String, reason: String)
    case unsigned
    case badSignature

    package var description: String {
        switch self {
        case .malformedKey(let path, let reason): "\(path): not a mappack Ed25519 key: \(reason)"
        case .unsigned: "the image is not signed (no manifest.sig), but a trusted key was given"
        case .badSignature:
            "manifest.sig does not match the manifest for any trusted key: the manifest was changed after signing, or signed by another key"
        }
    }
}

/// Ed25519 keys and signatures over libcrypto (`EVP_PKEY_new_raw_*_key`, `EVP_DigestSign`, `EVP_DigestVerify`).
/// Keys are stored as one line of text: `mappack-ed25519-private:<base64 seed>` / `mappack-ed25519-public:<base64>`.
package enum Ed25519 {
    static let privatePrefix = "mappack-ed25519-private:"
    static let publicPrefix = "mappack-ed25519-public:"

    /// A new key pair as (private text, public text).
    package static func generate() -> (privateKey: String, publicKey: String) {
        var seed = [UInt8](repeating: 0, count: 32)
        unsafe precondition(RAND_bytes(&seed, 32) == 1, "RAND_bytes failed")
        let publicKey = publicKey(seed: seed)
        return (privatePrefix + Data(seed).base64EncodedString(), publicPrefix + Data(publicKey).base64EncodedString())
    }

    private static func publicKey(seed: [UInt8]) -> [UInt8] {
        let key = unsafe EVP_PKEY_new_raw_private_key(MP_EVP_PKEY_ED25519, nil, seed, 32)
        defer { unsafe EVP_PKEY_free(key) }
        var out = [UInt8](repeating: 0, count: 32)
        var length = 32
        unsafe EVP_PKEY_get_raw_public_key(key, &out, &length)
        return out
    }

    private static func decode(_ text: String, prefix: String, path: String) throws(SignatureError) -> [UInt8] {
        let line = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard line.hasPrefix(prefix) else { throw .malformedKey(path: path, reason: "expected a line starting with '\(prefix)'") }
        guard let bytes = Data(base64Encoded: String(line.dropFirst(prefix.count))), bytes.count == 32 else {
            throw .malformedKey(path: path, reason: "the key is not 32 bytes of base64")
        }
        return [UInt8](bytes)
    }

    /// The public key text (`mappack-ed25519-public:…`) of the private key text read from `path`.
    package static func publicKey(ofPrivate text: String, path: String) throws(SignatureError) -> String {
        publicPrefix + Data(publicKey(seed: try decode(text, prefix: privatePrefix, path: path))).base64EncodedString()
    }

    /// The raw 32 bytes of the public key text read from `path`.
    package static func rawPublicKey(_ text: String, path: String) throws(SignatureError) -> [UInt8] {
        try decode(text, prefix: publicPrefix, path: path)
    }

    /// Signs `message` with the private key text read from `path`.
    package static func sign(_ message: Data, privateKey text: String, path: String) throws(SignatureError) -> Data {
        let seed = try decode(text, prefix: privatePrefix, path: path)
        let key = unsafe EVP_PKEY_new_raw_private_key(MP_EVP_PKEY_ED25519, nil, seed, 32)
        defer { unsafe EVP_PKEY_free(key) }
        let context = unsafe EVP_MD_CTX_new()
        defer { unsafe EVP_MD_CTX_free(context) }
        var signature = [UInt8](repeating: 0, count: 64)
        var length = 64
        let bytes = [UInt8](message)
        guard unsafe EVP_DigestSignInit(context, nil, nil, nil, key) == 1,
            unsafe EVP_DigestSign(context, &signature, &length, bytes, bytes.count) == 1
        else {
            throw .malformedKey(path: path, reason: "libcrypto refused to sign with it")
        }
        return Data(signature.prefix(length))
    }

    /// True when `signature` is a valid signature of `message` under the public key text from `path`.
    package static func verify(_ message: Data, signature: Data, publicKey text: String, path: String) throws(SignatureError) -> Bool {
        let raw = try decode(text, prefix: publicPrefix, path: path)
        let key = unsafe EVP_PKEY_new_raw_public_key(MP_EVP_PKEY_ED25519, nil, raw, 32)
        defer { unsafe EVP_PKEY_free(key) }
        let context = unsafe EVP_MD_CTX_new()
        defer { unsafe EVP_MD_CTX_free(context) }
        let bytes = [UInt8](message)
        let sig = [UInt8](signature)
        guard unsafe EVP_DigestVerifyInit(context, nil, nil, nil, key) == 1 else { return false }
        return unsafe EVP_DigestVerify(context, sig, sig.count, bytes, bytes.count) == 1
    }
}
