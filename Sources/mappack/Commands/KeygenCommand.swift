import Foundation
import MapIO

/// `mappack keygen --out NAME`: writes `NAME.key` (private, mode 0600) and `NAME.pub`.
enum KeygenCommand {
    static func run(_ raw: [String], terminal: Terminal) throws -> Int32 {
        let arguments = try Arguments(raw, verb: Verbs.named("keygen")!)
        _ = try arguments.expect([])
        guard let out = arguments.option("out") else { throw UsageError(message: "keygen needs --out NAME (writes NAME.key and NAME.pub)") }
        let (privateKey, publicKey) = Ed25519.generate()
        let keyPath = out + ".key", pubPath = out + ".pub"
        if !arguments.flag("force") {
            for path in [keyPath, pubPath] where FileSystem.exists(path) { throw UsageError(message: "\(path) exists; pass --force to overwrite it") }
        }
        // Owner-only from creation on, never a window in which the key is readable by others.
        try FileSystem.writeAtomically(Data((privateKey + "\n").utf8), to: keyPath, permissions: 0o600)
        try FileSystem.writeAtomically(Data((publicKey + "\n").utf8), to: pubPath)
        if terminal.json { terminal.event(["event": "keygen", "private": keyPath, "public": pubPath]) } else {
            terminal.line("private key: \(keyPath) (keep it secret; sign with `mappack build --sign \(keyPath)`)")
            terminal.line("public key:  \(pubPath) (ship it; check with `mappack verify --trust \(pubPath)`)")
        }
        return 0
    }
}

/// Reads key files named on the command line.
enum KeyFiles {
    static func read(_ path: String) throws -> String {
        do { return String(decoding: try ReadableFile.contents(of: path, limit: 4096), as: UTF8.self) } catch {
            throw UsageError(message: "cannot read key file: \(error)")
        }
    }
}
