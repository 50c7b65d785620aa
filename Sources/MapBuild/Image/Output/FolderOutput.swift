import MapFormat

/// The image as a folder, `<image>/manifest.json` and `<image>/store/…`: the staged image folder
/// itself, renamed into place.
struct FolderOutput: ImageOutput {
    var phase: BuildPhase? { nil }

    func publishedName(imageName: String) -> String { imageName }

    func stampedPath(imageName: String) -> String { imageName + "/" + ImageManifest.fileName }

    func stage(_ source: ImageOutputSource) throws -> String { ImageOutputSource.imageEntry }
}
