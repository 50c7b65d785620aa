import Foundation

/// Hostile archives generated once per test process by `Tests/Fixtures/hostile_archives.py`.
public enum HostileArchives {
    static let folder: String = {
        let folder = NSTemporaryDirectory() + "/mappack-hostile-\(getpid())"
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/hostile_archives.py").path
        let result = try! Tool.run("/usr/bin/python3", [script, folder])
        precondition(result.status == 0, result.stderr)
        return folder
    }()

    /// Path of the archive for `name` (a case of the generator).
    public static func path(_ name: String) -> String { folder + "/" + name + ".tar.zst" }

    /// For a `dialect_*` case: its regular files, path → (size, hex SHA-256), as the generator wrote them.
    public static func listing(_ name: String) throws -> [String: (size: Int64, sha256: String)] {
        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name + ".json"))
        let object = try JSONSerialization.jsonObject(with: data) as? [String: [Any]] ?? [:]
        return object.compactMapValues { pair in
            guard pair.count == 2, let size = pair[0] as? Int, let digest = pair[1] as? String else { return nil }
            return (Int64(size), digest)
        }
    }
}
