import Foundation
import MapBuild
import MapFetch
import MapFormat
import MapIO
import MapStore
import MapVerify

/// `mappack`: build, plan, browse, publish and verify preinstalled offline map images.
@main
struct Mappack {
    static func main() async {
        setlocale(LC_CTYPE, "C.UTF-8")
        signal(SIGPIPE, SIG_IGN)
        Allocator.limitArenas(1)
        Allocator.releaseLargeBlocks()
        var arguments = Array(CommandLine.arguments.dropFirst())
        // Options every verb takes may come before it too (`mappack -q build …`); the verb reads them.
        let global = arguments.prefix { Mappack.isGlobalOption($0) }
        arguments.removeFirst(global.count)
        guard !arguments.isEmpty else {
            Terminal.write(Data((Help.usage + "\n").utf8), to: STDERR_FILENO)
            exit(2)
        }
        let verb = arguments.removeFirst()
        arguments.insert(contentsOf: global, at: 0)
        let terminal = Terminal(arguments: arguments)
        do {
            let code: Int32
            switch verb {
            case "build": code = try await BuildCommand.run(arguments, terminal: terminal)
            case "plan": code = try PlanCommand.run(arguments, terminal: terminal)
            case "regions": code = try RegionsCommand.run(arguments, terminal: terminal)
            case "verify": code = try VerifyCommand.run(arguments, terminal: terminal)
            case "serve": code = try ServeCommand.run(arguments, terminal: terminal)
            case "publish": code = try await PublishCommand.run(arguments, terminal: terminal)
            case "keygen": code = try KeygenCommand.run(arguments, terminal: terminal)
            case "inspect": code = try InspectCommand.run(arguments, terminal: terminal)
            case "diff": code = try DiffCommand.run(arguments, terminal: terminal)
            case "merge": code = try await MergeCommand.run(arguments, terminal: terminal)
            case "import": code = try await ImportCommand.run(arguments, terminal: terminal)
            case "store": code = try StoreCommand.run(arguments, terminal: terminal)
            case "completions":
                let shell = try Arguments(arguments, verb: Verbs.named("completions")!).expect(["shell"])[0]
                let script = try Help.completions(shell)
                if terminal.json {
                    terminal.record(["shell": shell, "script": script], schema: JSONSchemas.completions)
                } else {
                    terminal.line(script)
                }
                code = 0
            case "help", "--help", "-h":
                let parsed = try Arguments(arguments, verb: Verbs.named("help")!)
                if terminal.json {
                    let verbs = try parsed.positionals.map { name throws(UsageError) -> VerbSpec in
                        guard let spec = Verbs.named(name) else { throw unknownVerb(name) }
                        return spec
                    }
                    terminal.record(Help.json(verbs.isEmpty ? Verbs.all : verbs), schema: JSONSchemas.help)
                } else if parsed.flag("man") {
                    terminal.line(Help.manPage)
                } else if let name = parsed.positionals.first {
                    guard let spec = Verbs.named(name) else { throw unknownVerb(name) }
                    terminal.line(Help.verb(spec))
                } else {
                    terminal.line(Help.usage)
                }
                code = 0
            case "--version", "-V", "version":
                let libraries = [
                    CurlTransfer.libraryVersion, ArchiveWriter.libraryVersion, Zstd.libraryVersion,
                    SQLiteDatabase.libraryVersion, YAMLDocument.libraryVersion, SHA256.libraryVersion,
                ]
                if terminal.json {
                    terminal.record(["version": MappackVersion.current, "libraries": libraries], schema: JSONSchemas.version)
                } else {
                    terminal.line(Help.version(libraries: libraries))
                }
                code = 0
            default: throw unknownVerb(verb)
            }
            exit(code)
        } catch let request as UsageError where request.help != nil {
            terminal.line(Help.verb(request.help!))
            exit(0)
        } catch {
            let code = exitCode(for: error)
            // The store's messages name its Swift calls for app developers; a person here gets the commands.
            let message = (error as? MapStoreError).map(StoreMessages.text) ?? "\(error)"
            if terminal.json { terminal.event(["event": "failed", "error": message, "exitCode": Int(code)]) }
            terminal.error(message)
            exit(code)
        }
    }

    /// `--json`, `--quiet`, `--verbose` and their short forms, alone or grouped (`-qv`): the options
    /// of every verb, also taken before the verb.
    static func isGlobalOption(_ argument: String) -> Bool {
        if ["--json", "--quiet", "--verbose"].contains(argument) { return true }
        guard argument.count > 1, argument.hasPrefix("-"), !argument.hasPrefix("--") else { return false }
        return argument.dropFirst().allSatisfy { $0 == "q" || $0 == "v" }
    }

    /// An unknown command, with the nearest known one.
    static func unknownVerb(_ verb: String) -> UsageError {
        let suggestion = Spelling.nearest(to: verb, among: Verbs.all.map(\.name)).map { "; did you mean '\($0)'?" } ?? ""
        return UsageError(message: "unknown command '\(verb)'\(suggestion)")
    }

    /// The one place errors become exit codes: 2 for bad usage or bad input files, 1 for failed work.
    static func exitCode(for error: any Error) -> Int32 {
        switch error {
        case is LoopbackServerError: return 1
        case is UsageError, is RecipeError, is JSONFileError, is ImageOpenError, is PublishError, is MergeError, is CacheFolderError: return 2
        case let error as PlanError:
            if case .capacityExceeded = error { return 1 }
            if case .catalog(.untrusted) = error { return 1 }
            if case .catalog(.unreadable(let url, _)) = error, !url.hasPrefix("/") && !url.hasPrefix("file:") { return 1 }
            return 2
        case let error as BuildError:
            if case .plan(let planError) = error { return exitCode(for: planError) }
            if case .pathInTwoBundles = error { return 2 }
            if case .mixedTileFormats = error { return 2 }
            if case .releasedNotATime = error { return 2 }
            return 1
        case let error as ImportError: return error.isBadInput ? 2 : 1
        case let error as CatalogSource.LoadError:
            if case .untrusted = error { return 1 }
            return 2
        case let error as MapStoreError:
            // The caller's to fix: a region id it gave, a catalog it has not given yet, a folder to move to.
            switch error {
            case .notInstalled, .unknownRegion, .unknownCatalogRegion, .noCatalogURL, .destinationNotEmpty: return 2
            default: break
            }
            // A catalog file named on the command line is input; one a server sent is failed work.
            if case .invalidCatalog(let url, _) = error, url.hasPrefix("/") || url.hasPrefix("file:") { return 2 }
            return 1
        default: return 1
        }
    }
}
