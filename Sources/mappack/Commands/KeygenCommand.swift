import Foundation
import MapIO

/// `mappack keygen --out NAME`: writes `NAME.key` (private, mode 0600), `NAME.pub` and the same
/// public key in minisign's format, `NAME.minisign.pub` (for `minisign -V`). With `--from KEY`, only
/// the two public files, from an existing private key.
enum KeygenCommand {
    static func run(_ raw: [String], terminal: Terminal) throws -> ExitCode {
        let arguments = try Arguments(raw, verb: Verbs.keygen)
        _ = try arguments.expect([])
        guard let out = arguments.option(Verbs.Keygen.out) else {
            throw UsageError(message: "keygen needs --out NAME (writes NAME.key and NAME.pub)")
        }
        let privateKey: String?
        let publicKey: String
        if let from = arguments.option(Verbs.Keygen.from) {
            do { publicKey = try Ed25519.publicKey(ofPrivate: try KeyFiles.read(from), path: from) } catch let error as SignatureError {
                throw UsageError(message: "--from: \(error)")
            }
            privateKey = nil
        } else {
            let pair = Ed25519.generate()
            (privateKey, publicKey) = (pair.privateKey, pair.publicKey)
        }
        let keyPath = out + ".key"
        let pubPath = out + ".pub"
        let minisignPath = out + ".minisign.pub"
        let written = (privateKey == nil ? [] : [keyPath]) + [pubPath, minisignPath]
        if !arguments.flag(Verbs.Keygen.force) {
            for path in written where FileSystem.exists(path) { throw UsageError(message: "\(path) exists; pass --force to overwrite it") }
        }
        // Owner-only from creation on, never a window in which the key is readable by others.
        if let privateKey { try FileSystem.writeAtomically(Data((privateKey + "\n").utf8), to: keyPath, permissions: 0o600) }
        try FileSystem.writeAtomically(Data((publicKey + "\n").utf8), to: pubPath)
        try FileSystem.writeAtomically(Data(try Minisign.publicKeyFile(publicKey, path: pubPath).utf8), to: minisignPath)
        if terminal.json {
            terminal.event(KeygenEvent(public: pubPath, minisignPublic: minisignPath, private: privateKey == nil ? nil : keyPath))
        } else {
            if privateKey != nil { terminal.line("private key: \(keyPath) (keep it secret; sign with `mappack build --sign \(keyPath)`)") }
            terminal.line("public key:  \(pubPath) (ship it; check with `mappack verify --trust \(pubPath)`)")
            terminal.line("minisign:    \(minisignPath) (the same key for `minisign -V -p \(minisignPath) -m IMAGE/manifest.json`)")
        }
        return .success
    }
}

/// Reads key files named on the command line.
enum KeyFiles {
    static func read(_ path: String) throws -> String {
        do { return String(decoding: try ReadableFile.regularFileContents(of: path, limit: 4096), as: UTF8.self) } catch {
            throw UsageError(message: "cannot read key file: \(error)")
        }
    }
}
