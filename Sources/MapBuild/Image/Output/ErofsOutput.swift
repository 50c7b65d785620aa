import Foundation
import MapFormat
import MapIO

/// The image as a device partition image, `<image>.erofs`: an EROFS filesystem holding the image
/// folder, a dm-verity hash tree appended, and beside it the sidecar `<image>.erofs.verity.json`
/// with the tree's root hash and parameters (`ErofsImage`), signed with the build key into
/// `<image>.erofs.verity.json.minisig` (minisign's format, as the manifest's `.minisig`).
struct ErofsOutput: SingleFileOutput {
    static let fileExtension = ".erofs"

    var phase: BuildPhase? { .erofs }

    func companionNames(imageName: String) -> [String] {
        let sidecar = VeritySidecar.path(of: publishedName(imageName: imageName))
        return [sidecar, sidecar + Minisign.signatureExtension]
    }

    func stage(_ source: ImageOutputSource) throws -> String {
        let name = publishedName(imageName: source.imageName)
        let file = source.stagingFolder + "/" + name
        let sidecar = try ErofsImage.make(
            from: source.imageFolder, to: file, built: source.built, imageID: source.imageID, mapVersion: source.mapVersion)
        let bytes = try sidecar.encoded()
        let sidecarPath = VeritySidecar.path(of: file)
        try FileSystem.writeAtomically(bytes, to: sidecarPath)
        if let key = source.signingKey {
            let comment = "image:\(source.imageName)\timageID:\(source.imageID)\tbuilt:\(source.built)\tfile:\(VeritySidecar.path(of: name))"
            let minisig = try Minisign.signature(of: bytes, privateKey: key.text, path: key.path, trustedComment: comment)
            try FileSystem.writeAtomically(Data(minisig.utf8), to: sidecarPath + Minisign.signatureExtension)
        }
        return name
    }
}
