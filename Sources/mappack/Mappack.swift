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
    static let usage = """
        usage: mappack <command> [options]

          build   RECIPE [--json] [--jobs N] [--cache DIR] [--out DIR] [--sign KEY]   build an image into ./Output (or --out)
                  [--from OLD_IMAGE] [--remote-cache URL [--remote-cache-readonly]] [--shard I/N] [--force]
                  [--trust PUBKEY]                                       the catalog must be signed by PUBKEY (catalog.json.sig)
          merge   SHARD... [--out DIR] [--sign KEY]                      assemble an image from --shard outputs
          plan    RECIPE [--json] [--cache DIR]                          what a build would do, with exact sizes
          regions CATALOG [--lang L] [--tree] [--json] [--filter TEXT]   browse a catalog's region tree
          verify  PATH [--quick] [--trust PUBKEY] [--json]               check an image folder, .tar.zst or installed store
          inspect IMAGE [--trust PUBKEY] [--lang L] [--json]             what an image holds
          diff    OLD NEW [--json]                                       two images or catalogs: regions, bundles, bytes
          store   VERB --storage S --cache C                             drive MapStore as a device would (mappack store help)
          keygen  --out NAME                                             Ed25519 key pair for --sign / --trust
          publish SOURCE_DIR --out DIR [--jobs N]                        region source folders → catalog + bundles
                  [--sign KEY [--catalog-version N] [--expires 14d] [--next-key PUBKEY]]   and catalog.json.sig
          help                                                           this text

        exit codes: 0 ok, 1 the work failed, 2 bad usage or bad input
        """

    static func main() async {
        setlocale(LC_CTYPE, "C.UTF-8")
        signal(SIGPIPE, SIG_IGN)
        Allocator.limitArenas(1)
        var arguments = Array(CommandLine.arguments.dropFirst())
        guard !arguments.isEmpty else { Terminal.write(Data(usage.utf8), to: STDERR_FILENO); exit(2) }
        let verb = arguments.removeFirst()
        let json = arguments.contains("--json")
        let terminal = Terminal(json: json)
        do {
            let code: Int32
            switch verb {
            case "build": code = try await BuildCommand.run(arguments, terminal: terminal)
            case "plan": code = try PlanCommand.run(arguments, terminal: terminal)
            case "regions": code = try RegionsCommand.run(arguments, terminal: terminal)
            case "verify": code = try VerifyCommand.run(arguments, terminal: terminal)
            case "publish": code = try await PublishCommand.run(arguments, terminal: terminal)
            case "keygen": code = try KeygenCommand.run(arguments, terminal: terminal)
            case "inspect": code = try InspectCommand.run(arguments, terminal: terminal)
            case "diff": code = try DiffCommand.run(arguments, terminal: terminal)
            case "merge": code = try await MergeCommand.run(arguments, terminal: terminal)
            case "store": code = try StoreCommand.run(arguments, terminal: terminal)
            case "help", "--help", "-h": print(usage); code = 0
            default: throw UsageError(message: "unknown command '\(verb)'")
            }
            exit(code)
        } catch {
            let code = exitCode(for: error)
            if json { terminal.event(["event": "failed", "error": "\(error)", "exitCode": Int(code)]) }
            terminal.error("\(error)")
            exit(code)
        }
    }

    /// The one place errors become exit codes: 2 for bad usage or bad input files, 1 for failed work.
    static func exitCode(for error: any Error) -> Int32 {
        switch error {
        case is UsageError, is RecipeError, is JSONFileError, is ImageOpenError, is PublishError, is MergeError, is CacheFolderError: return 2
        case let error as PlanError:
            if case .capacityExceeded = error { return 1 }
            if case .catalog(.untrusted) = error { return 1 }
            if case .catalog(.unreadable(let url, _)) = error, !url.hasPrefix("/") && !url.hasPrefix("file:") { return 1 }
            return 2
        case let error as BuildError:
            if case .plan(let planError) = error { return exitCode(for: planError) }
            if case .pathInTwoBundles = error { return 2 }
            return 1
        case let error as CatalogSource.LoadError:
            if case .untrusted = error { return 1 }
            return 2
        case let error as MapStoreError:
            if case .notInstalled = error { return 2 }
            // A catalog file named on the command line is input; one a server sent is failed work.
            if case .invalidCatalog(let url, _) = error, url.hasPrefix("/") || url.hasPrefix("file:") { return 2 }
            return 1
        default: return 1
        }
    }
}
