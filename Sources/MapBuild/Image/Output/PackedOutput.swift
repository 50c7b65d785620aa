/// The image as one `<image>.tar.zst` (see `ImagePacker` for its entry order).
struct PackedOutput: ImageOutput {
    static let fileExtension = ".tar.zst"

    var phase: String? { "pack" }

    func publishedName(imageName: String) -> String { imageName + PackedOutput.fileExtension }

    func stampedPath(imageName: String) -> String { publishedName(imageName: imageName) }

    func stage(_ source: ImageOutputSource) throws -> String {
        let name = publishedName(imageName: source.imageName)
        try ImagePacker.pack(image: source.imageFolder, built: source.built, cacheSeed: source.cacheSeed, signature: source.signature,
                             to: source.stagingFolder + "/" + name)
        return name
    }
}
