import CCrypto
import Foundation
import MapFormat

/// minisign's file formats for mappack's Ed25519 keys, so stock `minisign -V` checks what mappack
/// signs. The signature is minisign's default, prehashed kind (`ED`: Ed25519 over the message's
/// BLAKE2b-512), with a trusted comment signed together with it; the public key file is the
/// two lines `minisign -G` writes. The key id, which minisign picks at random, is here the first
/// eight bytes of the public key's SHA-256, so one key always has the same id.
package enum Minisign {
    /// The extension minisign looks for beside a file (`-m FILE` reads `FILE.minisig`).
    package static let signatureExtension = ".minisig"

    /// The key id of the raw public key (eight bytes).
    static func keyID(publicKey: [UInt8]) -> [UInt8] {
        Array(Hex.decode(SHA256.hex(Data(publicKey)))!.prefix(8))
    }

    /// The key id as minisign prints it (upper-case hex of the little-endian number).
    package static func keyIDText(publicKey: [UInt8]) -> String {
        keyID(publicKey: publicKey).reversed().map { String(format: "%02X", $0) }.joined()
    }

    /// The public key file for the mappack public key text read from `path`.
    package static func publicKeyFile(_ text: String, path: String) throws(SignatureError) -> String {
        let raw = try Ed25519.rawPublicKey(text, path: path)
        let line = Data(Array("Ed".utf8) + keyID(publicKey: raw) + raw).base64EncodedString()
        return "untrusted comment: minisign public key \(keyIDText(publicKey: raw))\n\(line)\n"
    }

    /// The `.minisig` file for `message`, signed with the mappack private key text read from
    /// `path`. `trustedComment` (one line) is signed too and shown by `minisign -V`.
    package static func signature(
        of message: Data, privateKey text: String, path: String,
        trustedComment: String
    ) throws(SignatureError) -> String {
        let publicKey = try Ed25519.rawPublicKey(try Ed25519.publicKey(ofPrivate: text, path: path), path: path)
        let signature = try Ed25519.sign(blake2b512(message), privateKey: text, path: path)
        let comment = trustedComment.replacingOccurrences(of: "\n", with: " ")
        let global = try Ed25519.sign(signature + Data(comment.utf8), privateKey: text, path: path)
        let line = Data(Array("ED".utf8) + keyID(publicKey: publicKey) + signature).base64EncodedString()
        return "untrusted comment: signature from mappack, key \(keyIDText(publicKey: publicKey))\n\(line)\n"
            + "trusted comment: \(comment)\n\(global.base64EncodedString())\n"
    }

    /// Whether `signatureFile` (a `.minisig`, as `signature(of:…)` writes and stock minisign
    /// writes with `-H`, the prehashed kind) is a signature of `message` by the mappack public key
    /// text read from `path`, trusted comment included: minisign's `-V` checks, made here so a
    /// device or a verify without minisign installed checks the same. False for another key id, a
    /// changed message or comment, or a file that is not a prehashed signature.
    package static func verify(_ message: Data, signatureFile: String, publicKey text: String, path: String) throws(SignatureError) -> Bool {
        let raw = try Ed25519.rawPublicKey(text, path: path)
        let lines = signatureFile.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let commentPrefix = "trusted comment: "
        guard lines.count >= 4, lines[2].hasPrefix(commentPrefix),
            let line = Data(base64Encoded: lines[1]), line.count == 74, Array(line.prefix(2)) == Array("ED".utf8),
            let global = Data(base64Encoded: lines[3]), global.count == 64
        else { return false }
        guard Array(line.dropFirst(2).prefix(8)) == keyID(publicKey: raw) else { return false }
        let signature = Data(line.suffix(64))
        let publicKey = Ed25519.publicPrefix + Data(raw).base64EncodedString()
        guard try Ed25519.verify(blake2b512(message), signature: signature, publicKey: publicKey, path: path) else { return false }
        let comment = Data(lines[2].dropFirst(commentPrefix.count).utf8)
        return try Ed25519.verify(signature + comment, signature: global, publicKey: publicKey, path: path)
    }

    /// The trusted comment of a `.minisig` file (its third line, without `trusted comment: `).
    package static func trustedComment(of signatureFile: String) -> String? {
        let lines = signatureFile.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count >= 3, lines[2].hasPrefix("trusted comment: ") else { return nil }
        return String(lines[2].dropFirst("trusted comment: ".count))
    }

    /// BLAKE2b with a 64-byte output and no key (libcrypto's `EVP_blake2b512`), as minisign
    /// prehashes.
    static func blake2b512(_ message: Data) -> Data {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let done = unsafe message.withUnsafeBytes { bytes in
            unsafe EVP_Digest(bytes.baseAddress, bytes.count, &digest, &length, EVP_blake2b512(), nil)
        }
        precondition(done == 1 && length == 64, "libcrypto has no BLAKE2b-512")
        return Data(digest.prefix(64))
    }
}
