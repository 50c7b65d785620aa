import Foundation
import MapFormat
import MapIO

extension Recipe {
    /// Largest recipe file accepted.
    public static let maxFileBytes = 1 << 20

    /// Reads and checks the recipe at `path`.
    public static func load(_ path: String) throws(RecipeError) -> Recipe {
        let data: Data
        do { data = try ReadableFile.contents(of: path, limit: maxFileBytes) } catch {
            // The error names the file already; its message must not repeat the path.
            let message =
                switch error.code {
                case ENOENT: "no such recipe file" + (nearestExisting(path).map { "; did you mean '\($0)'?" } ?? "")
                case EISDIR: "is a folder, not a recipe file; give the recipe's .yaml file"
                default: "cannot read the recipe: \(error.action) failed: \(error.cause)"
                }
            throw RecipeError(file: path, line: 0, column: 0, message: message)
        }
        return try parse(data, file: path)
    }

    /// A BCP 47 language tag in its common shape: a primary language of 2-3 letters, then subtags of
    /// 1-8 letters or digits, separated by `-`. The 4-8 letter primaries the grammar reserves name no
    /// language, and would let YAML's `true`, `false` and `null` pass as tags.
    static func isLanguageTag(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard let primary = parts.first, (2...3).contains(primary.count), primary.allSatisfy({ $0.isASCII && $0.isLetter }) else { return false }
        return parts.dropFirst().allSatisfy { part in (1...8).contains(part.count) && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
    }

    /// The recipe file the user may have meant when `path` names nothing: each missing part of the
    /// path replaced by the one entry of its folder that differs from it only in case (a
    /// case-sensitive filesystem finds no `recipes/` beside `Recipes/`), and for the file itself,
    /// failing that, the nearest `.yaml` name within two edits. Spelled as the user spelled the rest.
    static func nearestExisting(_ path: String) -> String? {
        var parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        var folder = path.hasPrefix("/") ? "/" : "."
        var changed = false
        for index in parts.indices where !parts[index].isEmpty && parts[index] != "." {
            let part = parts[index]
            if FileSystem.exists(folder + "/" + part) {
                folder += "/" + part
                continue
            }
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder).sorted() else { return nil }
            // `Recipes` and a `recipes` link to it are one folder: one suggestion, the real name first.
            var matches: [String] = []
            var resolved = Set<String>()
            for name in names where name.lowercased() == part.lowercased() {
                let target = URL(fileURLWithPath: folder + "/" + name).resolvingSymlinksInPath().path
                if resolved.insert(target).inserted { matches.append(name) }
            }
            if matches.isEmpty, index == parts.count - 1 {
                let distances = names.filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }
                    .map { ($0, EditDistance.between(Array($0.lowercased().utf8), Array(part.lowercased().utf8))) }
                if let best = distances.min(by: { $0.1 < $1.1 }), best.1 <= 2 { matches = [best.0] }
            }
            guard matches.count == 1 else { return nil }
            parts[index] = matches[0]
            folder += "/" + matches[0]
            changed = true
        }
        guard changed, !FileSystem.isDirectory(folder), FileSystem.exists(folder) else { return nil }
        return parts.joined(separator: "/")
    }

    /// Parses recipe text; `file` locates relative catalog paths and names the file in errors.
    public static func parse(_ data: Data, file: String) throws(RecipeError) -> Recipe {
        func fail(_ node: YAMLNode?, _ message: String) -> RecipeError {
            RecipeError(file: file, line: node?.line ?? 0, column: node?.column ?? 0, message: message)
        }
        let root: YAMLNode?
        do { root = try YAMLDocument.parse(data) } catch {
            throw RecipeError(file: file, line: error.line, column: error.column, message: "not valid YAML: \(error.message)")
        }
        guard let root, case .mapping = root else { throw fail(root, "a recipe is a mapping with keys name, catalog, regions, …") }

        let top = try RecipeFields(
            root, path: "", allowed: ["name", "catalog", "mapVersion", "language", "regions", "cacheSeed", "target", "output"], file: file)
        let name = try top.requiredText("name")
        if let reason = PathName.problem(name) {
            throw fail(
                top.node("name"),
                "name '\(name)' may use only ASCII letters, digits, '-', '_', '.' and '+' (it names the output folder): it \(reason); \(PathName.rule)"
            )
        }
        let catalog = try top.requiredText("catalog")
        let catalogURL: URL
        if let url = URL(string: catalog), let scheme = url.scheme, ["http", "https", "file"].contains(scheme) {
            catalogURL = url
        } else if catalog.contains("://") {
            throw fail(top.node("catalog"), "catalog URL scheme not supported; use a path, file://, http:// or https://")
        } else {
            let base = FileSystem.parent(FileSystem.absolute(file))
            let absolute = catalog.hasPrefix("/") ? catalog : base + "/" + catalog
            catalogURL = URL(fileURLWithPath: (absolute as NSString).standardizingPath)
        }
        let mapVersion = try top.optionalText("mapVersion").map(MapVersion.init)
        if let mapVersion, let reason = PathName.problem(mapVersion.rawValue) {
            throw fail(top.node("mapVersion"), "mapVersion '\(mapVersion)' \(reason); \(PathName.rule)")
        }
        let language = try top.optionalText("language")
        if let language, !Recipe.isLanguageTag(language) {
            throw fail(
                top.node("language"),
                "language '\(language)' is not a language tag; write a BCP 47 tag such as de, en, pt-BR or zh-Hant (names fall back to it)")
        }

        guard let regionsNode = top.node("regions") else { throw fail(root, "missing required key 'regions' (with 'include: [...]')") }
        let regions = try RecipeFields(regionsNode, path: "regions.", allowed: ["include", "exclude"], file: file)
        let include = try regions.selectors("include")
        if include.isEmpty { throw fail(regionsNode, "regions.include lists no region; name at least one id or name") }
        let exclude = try regions.selectors("exclude")

        var seedInclude: [RegionSelector] = []
        var seedMax: Int64?
        if let seedNode = top.node("cacheSeed") {
            let seed = try RecipeFields(seedNode, path: "cacheSeed.", allowed: ["include", "maxBytes"], file: file)
            seedInclude = try seed.selectors("include")
            seedMax = try seed.optionalBytes("maxBytes")
        }
        var blockSize: Int64 = 4096
        var capacity: Int64?
        if let targetNode = top.node("target") {
            let target = try RecipeFields(targetNode, path: "target.", allowed: ["blockSize", "capacity"], file: file)
            if let value = try target.optionalBytes("blockSize") {
                guard value >= 512, value <= 1 << 20, value & (value - 1) == 0 else {
                    throw fail(target.node("blockSize"), "target.blockSize must be a power of two from 512 to 1 MiB, not \(value)")
                }
                blockSize = value
            }
            capacity = try target.optionalBytes("capacity")
        }
        var formats: [OutputFormat] = [.directory]
        var sync = false
        if let outputNode = top.node("output") {
            let output = try RecipeFields(outputNode, path: "output.", allowed: ["formats", "sync"], file: file)
            sync = try output.optionalBool("sync") ?? false
            if let list = output.node("formats") {
                guard case .sequence(let items, _, _) = list else { throw fail(list, "output.formats must be a list, e.g. [directory, tar.zst]") }
                formats = []
                for item in items {
                    guard case .scalar(let text, _, _) = item, let format = OutputFormat(rawValue: text) else {
                        throw fail(item, OutputFormat.unknownMessage(item))
                    }
                    if !formats.contains(format) { formats.append(format) }
                }
                if formats.isEmpty { throw fail(list, "output.formats is empty") }
            }
        }
        return Recipe(
            file: file, name: name, catalog: catalog, catalogURL: catalogURL, mapVersion: mapVersion, language: language,
            include: include, exclude: exclude, cacheSeedInclude: seedInclude, cacheSeedMaxBytes: seedMax,
            blockSize: blockSize, capacity: capacity, formats: formats, sync: sync, source: data, catalogLine: top.node("catalog")?.line ?? 0)
    }
}

/// The keys of one recipe mapping, checked against the keys it allows.
private struct RecipeFields {
    let mapping: [(key: String, keyLine: Int, keyColumn: Int, value: YAMLNode)]
    let path: String
    let file: String

    init(_ node: YAMLNode, path: String, allowed: [String], file: String) throws(RecipeError) {
        guard case .mapping(let pairs, _, _) = node else {
            throw RecipeError(
                file: file, line: node.line, column: node.column,
                message: "'\(path.dropLast())' must be a mapping of keys: \(allowed.joined(separator: ", "))")
        }
        var seen = Set<String>()
        for pair in pairs {
            if !allowed.contains(pair.key) {
                let nearest = allowed.min { EditDistance.between(Array(pair.key), Array($0)) < EditDistance.between(Array(pair.key), Array($1)) }!
                throw RecipeError(
                    file: file, line: pair.keyLine, column: pair.keyColumn,
                    message: "unknown key '\(path)\(pair.key)'; did you mean '\(path)\(nearest)'? (allowed: \(allowed.joined(separator: ", ")))")
            }
            if !seen.insert(pair.key).inserted {
                throw RecipeError(file: file, line: pair.keyLine, column: pair.keyColumn, message: "key '\(path)\(pair.key)' appears twice")
            }
        }
        self.mapping = pairs
        self.path = path
        self.file = file
    }

    func node(_ key: String) -> YAMLNode? { mapping.first { $0.key == key }?.value }

    func optionalText(_ key: String) throws(RecipeError) -> String? {
        guard let node = node(key) else { return nil }
        guard case .scalar(let text, _, _) = node else {
            throw RecipeError(file: file, line: node.line, column: node.column, message: "'\(path)\(key)' must be a single value")
        }
        return text
    }

    func requiredText(_ key: String) throws(RecipeError) -> String {
        guard let text = try optionalText(key) else {
            let line = mapping.first?.keyLine ?? 1
            throw RecipeError(file: file, line: line, column: 1, message: "missing required key '\(path)\(key)'")
        }
        return text
    }

    /// `true` or `false` (YAML's spellings of them: also `True`, `FALSE`, …).
    func optionalBool(_ key: String) throws(RecipeError) -> Bool? {
        guard let text = try optionalText(key) else { return nil }
        switch text {
        case "true", "True", "TRUE": return true
        case "false", "False", "FALSE": return false
        default:
            let node = node(key)!
            throw RecipeError(file: file, line: node.line, column: node.column, message: "'\(path)\(key)' must be true or false, not '\(text)'")
        }
    }

    func optionalBytes(_ key: String) throws(RecipeError) -> Int64? {
        guard let text = try optionalText(key) else { return nil }
        guard let bytes = ByteCount.parse(text) else {
            let node = node(key)!
            throw RecipeError(
                file: file, line: node.line, column: node.column,
                message: "'\(path)\(key)': '\(text)' is not a size; write e.g. 4096, 64 MiB or 32 GiB")
        }
        return bytes
    }

    func selectors(_ key: String) throws(RecipeError) -> [RegionSelector] {
        guard let node = node(key) else { return [] }
        let items: [YAMLNode]
        switch node {
        case .sequence(let list, _, _): items = list
        case .scalar: items = [node]
        case .mapping:
            throw RecipeError(file: file, line: node.line, column: node.column, message: "'\(path)\(key)' must be a list of region ids or names")
        }
        var out: [RegionSelector] = []
        for item in items {
            guard case .scalar(let text, let line, let column) = item, !text.isEmpty else {
                throw RecipeError(file: file, line: item.line, column: item.column, message: "'\(path)\(key)' entries must be region ids or names")
            }
            out.append(RegionSelector(text, location: "\(file):\(line):\(column)"))
        }
        return out
    }
}

extension Recipe.OutputFormat {
    /// What `output.formats` says about an entry that names no format: the value, the nearest
    /// format name when it looks like a typo, and the list.
    static func unknownMessage(_ item: YAMLNode) -> String {
        let names = allCases.map(\.rawValue)
        guard case .scalar(let text, _, _) = item else { return "an output format is a name, one of: \(names.joined(separator: ", "))" }
        let nearest = names.map { ($0, EditDistance.between(Array(text.utf8), Array($0.utf8))) }.filter { $0.1 <= 3 }.min { $0.1 < $1.1 }?.0
        return "unknown output format '\(text)'" + (nearest.map { "; did you mean '\($0)'?" } ?? "")
            + " (use one of: \(names.joined(separator: ", ")))"
    }
}
