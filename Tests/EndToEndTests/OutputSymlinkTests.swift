import Foundation
import TestSupport
import Testing

/// An output folder given as a symbolic link is refused by name, with why and what to pass instead
/// (issue 29 item 10c): a link could redirect what mappack writes, or be replaced by a real folder.
@Suite struct OutputSymlinkTests {
    @Test(arguments: ["build", "publish", "merge"])
    func outputFolderThatIsASymlinkIsRefused(_ verb: String) throws {
        let world = try PublishedWorld()
        let real = world.folder.join("real")
        let link = world.folder.join("link")
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)
        let arguments: [String]
        switch verb {
        case "build": arguments = ["build", try world.recipe(SourceFixture.recipe(catalog: world.catalog)), "--cache", world.cache]
        case "publish": arguments = ["publish", world.folder.join("source")]
        default: arguments = ["merge", world.folder.join("x.shard-1-of-2")]
        }
        for out in [link, link + "/"] {
            let result = try Tool.mappack(arguments + ["--out", out])
            #expect(result.status == 2, "\(verb) --out \(out): \(result.stdout)\(result.stderr)")
            #expect(result.stderr.contains("--out \(link) is a symbolic link"), "\(result.stderr)")
            #expect(result.stderr.contains("pass the folder it points to"), "\(result.stderr)")
            #expect(!result.stderr.contains("Not a directory"), "\(result.stderr)")
            let kept = try FileManager.default.destinationOfSymbolicLink(atPath: link)
            #expect(kept == real, "the link was replaced")
            #expect(try FileManager.default.contentsOfDirectory(atPath: real).isEmpty)
        }
    }
}
