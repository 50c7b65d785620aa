import Foundation

/// A fresh folder under the system temp dir, removed when the value is released.
public final class TemporaryFolder: @unchecked Sendable {
    /// Absolute path of the folder.
    public let path: String

    /// Creates `mappack-<label>-XXXXXX` in the temp dir.
    public init(_ label: String = "test") {
        var template = Array((NSTemporaryDirectory() + "/mappack-\(label)-XXXXXX").utf8CString)
        let made = unsafe template.withUnsafeMutableBufferPointer { unsafe mkdtemp($0.baseAddress!) != nil }
        precondition(made, "mkdtemp failed")
        path = unsafe template.withUnsafeBufferPointer { unsafe String(cString: $0.baseAddress!) }
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// `path/relative`.
    public func join(_ relative: String) -> String { path + "/" + relative }
}
