import Foundation
import TestSupport
import Testing

/// The project's headline command, `mappack build recipes/europe.yaml` then `mappack verify`, runs
/// as written from the repository root once `make demo`'s real world exists (issue 47), and so does
/// every command of README.md and docs/ that names a recipe of `Recipes/`.
///
/// Each test lays out a copy of the repository's root as a user's checkout has it after `make demo`:
/// the repository's own `Recipes/` folder and `recipes` link, and `Output/real-world/2026.12.0`, the
/// real world's published catalog (here the small real world of `RealWorldFixture`: the same
/// generator and publisher, three countries instead of all).
@Suite(.timeLimit(.minutes(10))) struct HeadlineRecipeTests {
    /// A checkout's root after `make demo`: `Recipes/`, `recipes`, `Output/real-world/2026.12.0`.
    static func checkout(_ label: String) throws -> TemporaryFolder {
        let root = TemporaryFolder(label)
        let files = FileManager.default
        try files.copyItem(atPath: Tool.repositoryRoot + "/Recipes", toPath: root.join("Recipes"))
        // The link is copied as the repository holds it (a link, not a second folder).
        let link = try files.destinationOfSymbolicLink(atPath: Tool.repositoryRoot + "/recipes")
        try files.createSymbolicLink(atPath: root.join("recipes"), withDestinationPath: link)
        try files.createDirectory(atPath: root.join("Output/real-world"), withIntermediateDirectories: true)
        try files.createSymbolicLink(
            atPath: root.join("Output/real-world/2026.12.0"), withDestinationPath: RealWorldFixture.shared.folder.join("catalog"))
        return root
    }

    @Test func headlineCommandBuildsAndVerifiesAsWritten() throws {
        let root = try Self.checkout("headline")
        let build = try Tool.mappack(["build", "recipes/europe.yaml"], in: root.path, environment: ["XDG_CACHE_HOME": root.join("cache")])
        #expect(build.status == 0, "\(build.stdout)\(build.stderr)")
        let image = "Output/europe-2026.12.0"
        let verify = try Tool.mappack(["verify", image], in: root.path)
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        // What a device takes: the packed image verifies too.
        let packed = try Tool.mappack(["verify", image + ".tar.zst"], in: root.path)
        #expect(packed.status == 0, "\(packed.stdout)\(packed.stderr)")
        // Europe of the real world: every country of the world's Europe, and the overview in the seed.
        let manifest = try String(contentsOfFile: root.join(image + "/manifest.json"), encoding: .utf8)
        for country in [RealWorldFixture.switzerland, RealWorldFixture.liechtenstein, RealWorldFixture.austria] {
            #expect(manifest.contains("\"\(country)\""), "\(country) missing from the image")
        }
        #expect(FileManager.default.fileExists(atPath: root.join(image + "/cache-seed.sqlite")))
    }

    /// A recipe path that differs only in case from one that exists (or is one typo away from a
    /// recipe's name) is named in the error, as unknown region ids are.
    @Test(arguments: [
        ("RECIPES/Europe.yaml", "Recipes/europe.yaml"),
        ("recipes/EUROPE.yaml", "recipes/europe.yaml"),
        ("recipes/europa.yaml", "recipes/europe.yaml"),
    ])
    func recipePathInAnotherCaseGetsADidYouMean(_ typed: String, _ meant: String) throws {
        let root = try Self.checkout("recipe-case")
        let build = try Tool.mappack(["build", typed], in: root.path)
        #expect(build.status == 2)
        #expect(build.stderr.contains("\(typed): no such recipe file; did you mean '\(meant)'?"), "\(build.stderr)")
        #expect(!FileManager.default.fileExists(atPath: root.join("Output/europe-2026.12.0")))
    }

    @Test func recipePathWithNothingNearGetsNoGuess() throws {
        let root = try Self.checkout("recipe-none")
        let build = try Tool.mappack(["build", "recipes/antarctica.yaml"], in: root.path)
        #expect(build.status == 2)
        #expect(build.stderr.contains("recipes/antarctica.yaml: no such recipe file") && !build.stderr.contains("did you mean"), "\(build.stderr)")
    }

    /// A build that fails on its input (here a catalog that is not there) leaves no empty `--out`
    /// behind (issue 43), and one into an existing folder leaves that folder.
    @Test func aBuildThatFailsOnItsInputLeavesNoOutputFolder() throws {
        let root = TemporaryFolder("failed-out")
        try Data("name: x\ncatalog: nothere.json\nregions:\n  include: [a]\n".utf8).write(to: URL(fileURLWithPath: root.join("r.yaml")))
        let failed = try Tool.mappack(["build", "r.yaml", "--out", "fresh"], in: root.path)
        #expect(failed.status == 2, "\(failed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: root.join("fresh")))
        // Nor the folders it made above a nested one.
        #expect(try Tool.mappack(["build", "r.yaml", "--out", "deep/er/fresh"], in: root.path).status == 2)
        #expect(!FileManager.default.fileExists(atPath: root.join("deep")))
        try FileManager.default.createDirectory(atPath: root.join("kept"), withIntermediateDirectories: true)
        #expect(try Tool.mappack(["build", "r.yaml", "--out", "kept"], in: root.path).status == 2)
        #expect(FileManager.default.fileExists(atPath: root.join("kept")))
    }

    /// Every `mappack …` command of README.md and docs/ that names a recipe of `Recipes/` runs as
    /// written, through bash, from the checkout's root: a GitHub Actions matrix runs once per value,
    /// its `env:` set, and its merge job afterwards on the shards laid out as `download-artifact`
    /// lays them; a remote cache's placeholder URL becomes a local nginx with WebDAV.
    @Test func everyDocumentedRecipeCommandRunsAsWritten() throws {
        let root = try Self.checkout("doc-recipes")
        let cacheRoot = root.join("remote-cache")
        try FileManager.default.createDirectory(atPath: cacheRoot, withIntermediateDirectories: true)
        let cache = try NginxServer(root: cacheRoot, webdav: true)
        let standIn = cache.baseURL.appendingPathComponent("mappack").absoluteString
        let documents =
            ["README.md"]
            + (try FileManager.default.contentsOfDirectory(atPath: Tool.repositoryRoot + "/docs"))
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        var ran = 0
        for document in documents {
            let text = try String(contentsOfFile: Tool.repositoryRoot + "/" + document, encoding: .utf8)
            for block in DocumentedBlock.all(in: text) where block.recipeCommands.contains(where: { !$0.isEmpty }) {
                for (values, command) in block.runs {
                    let line = command.replacingOccurrences(of: DocumentedBlock.remoteCachePlaceholder, with: standIn)
                    var environment = block.environment(values)
                    for (key, value) in environment {
                        environment[key] = value.replacingOccurrences(of: DocumentedBlock.remoteCachePlaceholder, with: standIn)
                    }
                    environment["PATH"] = Tool.buildFolder + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
                    // Each command is a fresh CI runner: an empty download cache of its own.
                    environment["XDG_CACHE_HOME"] = root.join("runner-\(ran)/cache")
                    let result = try Tool.run("/bin/bash", ["-e", "-o", "pipefail", "-c", line], in: root.path, environment: environment)
                    #expect(result.status == 0, "\(document): `\(line)` exited \(result.status)\n\(result.stdout)\(result.stderr)")
                    ran += 1
                    if let artifact = block.artifact(values) {
                        // What upload-artifact and download-artifact do between the jobs.
                        let folder = root.join("shards/" + artifact.name)
                        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                        let move = try Tool.run("/bin/bash", ["-c", "mv \(artifact.path) \(folder)/"], in: root.path)
                        #expect(move.status == 0, "\(move.stderr)")
                    }
                }
            }
        }
        // building.md: the remote-cache build, three shard runners and the merge job (which verifies).
        #expect(ran >= 5)
        let uploaded = (try? FileManager.default.contentsOfDirectory(atPath: cacheRoot + "/mappack/cas")) ?? []
        #expect(!uploaded.isEmpty, "nothing was uploaded to the stand-in remote cache")
        #expect(cache.bytesSent(prefix: "/mappack/cas/") > 0, "the shard runners never read the stand-in remote cache")
        #expect(FileManager.default.fileExists(atPath: root.join("Output/europe-2026.12.0/manifest.json")))
    }
}

/// One fenced block of a document, read for the commands it runs.
struct DocumentedBlock {
    static let remoteCachePlaceholder = "https://cache.example.com/mappack"
    let lines: [String]

    /// The fenced code blocks of a Markdown text.
    static func all(in text: String) -> [DocumentedBlock] {
        var blocks: [DocumentedBlock] = []
        var current: [String]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                if let lines = current { blocks.append(DocumentedBlock(lines: lines)) }
                current = current == nil ? [] : nil
            } else if current != nil {
                current?.append(line)
            }
        }
        return blocks
    }

    /// A block's shell commands: its plain lines, or a workflow's `- run:` lines; comments dropped.
    var commands: [String] {
        lines.compactMap { line in
            var text = line.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("- run:") { text = String(text.dropFirst("- run:".count)).trimmingCharacters(in: .whitespaces) }
            if let hash = text.range(of: " #") { text = String(text[..<hash.lowerBound]).trimmingCharacters(in: .whitespaces) }
            return text.hasPrefix("mappack ") ? text : nil
        }
    }

    /// The commands that name a recipe of the repository's `Recipes/` (or its `recipes` link).
    var recipeCommands: [String] {
        commands.filter { $0.contains(" Recipes/") || $0.contains(" recipes/") }
    }

    /// A workflow's matrix values (`matrix: { shard: [1, 2, 3] }`), or none.
    var matrix: (name: String, values: [String])? {
        for line in lines {
            guard let range = line.range(of: #"matrix: \{ (\w+): \[([^\]]*)\] \}"#, options: .regularExpression) else { continue }
            let inner = line[range].dropFirst("matrix: { ".count)
            let name = String(inner.prefix { $0 != ":" })
            let list = inner.drop { $0 != "[" }.dropFirst().prefix { $0 != "]" }
            return (name, list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        }
        return nil
    }

    /// Every command to run in order, with the matrix values it runs under: a command that names
    /// the matrix once per value, then the others once.
    var runs: [(values: [String: String], command: String)] {
        var out: [(values: [String: String], command: String)] = []
        let matrix = self.matrix
        for command in commands {
            if let matrix, command.contains("${{ matrix.\(matrix.name) }}") {
                for value in matrix.values {
                    out.append(([matrix.name: value], command.replacingOccurrences(of: "${{ matrix.\(matrix.name) }}", with: value)))
                }
            } else {
                out.append(([:], command))
            }
        }
        return out
    }

    /// The `env: { KEY: "value", … }` of a workflow's step that ran under `values`.
    func environment(_ values: [String: String]) -> [String: String] {
        guard !values.isEmpty else { return [:] }
        var out: [String: String] = [:]
        for line in lines {
            guard let range = line.range(of: #"env: \{.*\}"#, options: .regularExpression) else { continue }
            let inner = line[range].dropFirst("env: {".count).dropLast()
            for pair in inner.split(separator: ",") {
                let parts = pair.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2 else { continue }
                out[parts[0]] = parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }
        return out
    }

    /// The artifact a matrix step uploads (`with: { name: "shard-…", path: "…" }`), for its values.
    func artifact(_ values: [String: String]) -> (name: String, path: String)? {
        guard let (name, value) = values.first else { return nil }
        for line in lines where line.contains("upload-artifact") || line.contains("with: { name:") {
            guard let range = line.range(of: #"name: "[^"]*", path: "[^"]*""#, options: .regularExpression) else { continue }
            let fields = line[range].split(separator: "\"")
            return (
                fields[1].replacingOccurrences(of: "${{ matrix.\(name) }}", with: value),
                fields[3].replacingOccurrences(of: "${{ matrix.\(name) }}", with: value)
            )
        }
        return nil
    }
}
