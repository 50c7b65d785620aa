import Foundation
import MapFormat
import MapIO
import MapVerify

/// The storage's kept `manifest.json`: decoded, its exact bytes (what the id and a signature cover),
/// and its own problems (an id that does not match its content, sizes that do not match its files).
struct KeptManifest {
    var manifest: ImageManifest
    var bytes: Data
    var problems: [VerifyProblem]
}
