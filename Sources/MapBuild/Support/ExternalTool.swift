import Foundation

/// A program from a Debian package that a build or a verify runs (`mkfs.erofs`, `veritysetup`,
/// `fsck.erofs`): found on `PATH` or in the system folders, run with its standard output and error
/// collected together, and its failure an `ExternalToolError` that names the package to install.
struct ExternalTool: Sendable {
    /// The program's file name.
    let name: String
    /// The Debian package that installs it.
    let package: String

    static let mkfsErofs = ExternalTool(name: "mkfs.erofs", package: "erofs-utils")
    static let fsckErofs = ExternalTool(name: "fsck.erofs", package: "erofs-utils")
    static let veritysetup = ExternalTool(name: "veritysetup", package: "cryptsetup-bin")

    /// Where the program is: the first executable of that name on `PATH`, then in the system
    /// folders (`veritysetup` is in `/usr/sbin`, which a user's `PATH` often lacks).
    func location() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin"]
        return folders.lazy.map { $0 + "/" + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs the program with `arguments` in the C locale and waits for it; returns what it
    /// printed. A program missing, or one that exits other than 0 or is killed, throws.
    @discardableResult
    func run(_ arguments: [String]) throws(ExternalToolError) -> String {
        guard let executable = location() else { throw .missing(tool: name, package: package) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["LC_ALL"] = "C"
        process.environment = environment
        // One pipe for both streams, read to its end before the wait: no stream can fill and stall
        // the child, and the messages keep their order.
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { throw .failed(tool: name, package: package, arguments: arguments, status: -1, output: "\(error)") }
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let status = process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
        guard status == 0 else { throw .failed(tool: name, package: package, arguments: arguments, status: status, output: output) }
        return output
    }
}

/// Why a program a build or a verify runs did not do its work.
package enum ExternalToolError: Error, Sendable, CustomStringConvertible {
    /// Not installed.
    case missing(tool: String, package: String)
    /// It ran and failed: its exit status (128 + the signal when killed) and what it printed.
    case failed(tool: String, package: String, arguments: [String], status: Int32, output: String)

    package var description: String {
        switch self {
        case .missing(let tool, let package):
            "\(tool) is not installed; install Debian's \(package) (apt-get install \(package), or make deps)"
        case .failed(let tool, _, let arguments, let status, let output):
            "\(tool) \(arguments.joined(separator: " ")) failed (exit status \(status))"
                + (output.isEmpty ? "" : ":\n" + output.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }
}
