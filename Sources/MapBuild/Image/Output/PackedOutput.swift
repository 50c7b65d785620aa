/// The image as one `<image>.tar.zst` (see `ImagePacker` for its entry order).
struct PackedOutput: SingleFileOutput {
    static let fileExtension = ".tar.zst"

    var phase: BuildPhase? { .pack }

    func stage(_ source: ImageOutputSource) throws -> String {
        let name = publishedName(imageName: source.imageName)
        try ImagePacker.pack(
            image: source.imageFolder, built: source.built, cacheSeed: source.cacheSeed, signature: source.signature,
            to: source.stagingFolder + "/" + name, progress: source.packProgress)
        return name
    }
}
