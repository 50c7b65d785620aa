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
}
