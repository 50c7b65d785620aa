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
        unsafe setlocale(LC_CTYPE, "C.UTF-8")
        signal(SIGPIPE, SIG_IGN)
        var arguments = Array(CommandLine.arguments.dropFirst())
        // Options every verb takes may come before it too (`mappack -q build …`); the verb reads them.
        let global = arguments.prefix { Mappack.isGlobalOption($0) }
        arguments.removeFirst(global.count)
        guard !arguments.isEmpty else {
            Terminal.write(Data((Help.usage + "\n").utf8), to: STDERR_FILENO)
            exit(ExitCode.usage.rawValue)
        }
        let verb = arguments.removeFirst()
        let command = Mappack.command(named: verb)
        Allocator.limitArenas(command?.allocatorArenas ?? 1)
        // Large blocks go back to the system when freed (peak RSS of builds, installs); publish's
        // compressor workspaces are reused (`ZstdCompressor`), not allocated per archive.
        Allocator.releaseLargeBlocks()
        arguments.insert(contentsOf: global, at: 0)
        let terminal = Terminal(arguments: arguments)
        do {
            let code: ExitCode
            if let command {
                code = try await command.run(arguments, terminal: terminal)
            } else if ["--help", "-h"].contains(verb) {
                code = try HelpCommand.run(arguments, terminal: terminal)
            } else if ["--version", "-V", "version"].contains(verb) {
                code = VersionCommand.run(terminal: terminal)
            } else {
                throw unknownVerb(verb)
            }
            // A JSON line that could not be written leaves the output incomplete: failed work.
            exit(code == .success && terminal.lostLine ? ExitCode.failure.rawValue : code.rawValue)
        } catch let request as UsageError where request.help != nil {
            terminal.line(Help.verb(request.help!))
            exit(ExitCode.success.rawValue)
        } catch {
            let code = exitCode(for: error)
            // The store's messages name its Swift calls for app developers; a person here gets the commands.
            let message = (error as? MapStoreError).map(StoreMessages.text) ?? "\(error)"
            if terminal.json { terminal.event(FailedEvent(error: message, exitCode: Int(code.rawValue))) }
            terminal.error(message)
            exit(code.rawValue)
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

    /// The one place errors become exit codes: 2 for bad usage or bad input files, 1 for failed work,
    /// from each error's `FailureCategory` (declared beside the error), never from its text; a signal's
    /// code for an interrupted run.
    static func exitCode(for error: any Error) -> ExitCode {
        if let error = error as? InterruptedError { return .interrupted(by: error.signal) }
        switch (error as? any CategorizedError)?.failureCategory {
        case .badInput: return .usage
        case .failedWork, nil: return .failure
        }
    }
}

/// A verb of `mappack`: its spec (options, help, words) and its run, declared together, so a verb
/// the CLI lists always has a command (`Mappack.commands` is where `Verbs.all` comes from).
protocol VerbCommand {
    static var spec: VerbSpec { get }
    /// glibc arenas the verb's threads allocate from (`Allocator.limitArenas`, set before any thread
    /// starts). One, unless the verb says otherwise: it keeps a build's peak RSS lowest.
    static var allocatorArenas: Int32 { get }
    static func run(_ arguments: [String], terminal: Terminal) async throws -> ExitCode
}

extension VerbCommand {
    static var allocatorArenas: Int32 { 1 }
}

extension Mappack {
    /// Every verb, in the order help lists them.
    static var commands: [any VerbCommand.Type] {
        [
            BuildCommand.self, MergeCommand.self, PlanCommand.self, RegionsCommand.self, VerifyCommand.self, ServeCommand.self,
            InspectCommand.self, DiffCommand.self, StoreCommand.self, KeygenCommand.self, PublishCommand.self, ImportCommand.self,
            CompletionsCommand.self, HelpCommand.self,
        ]
    }

    /// The command of the verb `name`, nil when there is none.
    static func command(named name: String) -> (any VerbCommand.Type)? { commands.first { $0.spec.name == name } }
}

extension BuildCommand: VerbCommand { static var spec: VerbSpec { Verbs.build } }
extension MergeCommand: VerbCommand { static var spec: VerbSpec { Verbs.merge } }
extension PlanCommand: VerbCommand { static var spec: VerbSpec { Verbs.plan } }
extension RegionsCommand: VerbCommand { static var spec: VerbSpec { Verbs.regions } }
extension VerifyCommand: VerbCommand { static var spec: VerbSpec { Verbs.verify } }
extension ServeCommand: VerbCommand { static var spec: VerbSpec { Verbs.serve } }
extension InspectCommand: VerbCommand { static var spec: VerbSpec { Verbs.inspect } }
extension DiffCommand: VerbCommand { static var spec: VerbSpec { Verbs.diff } }
extension StoreCommand: VerbCommand { static var spec: VerbSpec { Verbs.store } }
extension KeygenCommand: VerbCommand { static var spec: VerbSpec { Verbs.keygen } }
extension ImportCommand: VerbCommand {
    static var spec: VerbSpec { Verbs.import }
    /// Its places' half, its tiles' half and its `tiles.db` writers allocate at once (SQLite's pages,
    /// rows as arrays): with one arena they queued on its lock (6% of the Europe import's CPU in
    /// `futex`); with four the import took about 0.9x the time.
    static var allocatorArenas: Int32 { 4 }
}

extension PublishCommand: VerbCommand { static var spec: VerbSpec { Verbs.publish } }

/// `mappack completions SHELL`.
enum CompletionsCommand: VerbCommand {
    static var spec: VerbSpec { Verbs.completions }

    static func run(_ arguments: [String], terminal: Terminal) throws -> ExitCode {
        let shell = try Arguments(arguments, verb: Verbs.completions).expect(["shell"])[0]
        let script = try Help.completions(shell)
        if terminal.json {
            terminal.record(CompletionsRecord(shell: shell, script: script))
        } else {
            terminal.line(script)
        }
        return .success
    }
}

/// `mappack help [VERB]` (also `--help`, `-h`).
enum HelpCommand: VerbCommand {
    static var spec: VerbSpec { Verbs.help }

    static func run(_ arguments: [String], terminal: Terminal) throws -> ExitCode {
        let parsed = try Arguments(arguments, verb: Verbs.help)
        if terminal.json {
            let verbs = try parsed.positionals.map { name throws(UsageError) -> VerbSpec in
                guard let spec = Verbs.named(name) else { throw Mappack.unknownVerb(name) }
                return spec
            }
            terminal.record(Help.json(verbs.isEmpty ? Verbs.all : verbs))
        } else if parsed.flag(Verbs.man) {
            terminal.line(Help.manPage)
        } else if let name = parsed.positionals.first {
            guard let spec = Verbs.named(name) else { throw Mappack.unknownVerb(name) }
            // `help store install`: one store verb's options.
            let subcommand = parsed.positionals.dropFirst().first.flatMap { spec.subcommand(named: $0) }
            terminal.line(Help.verb(subcommand ?? spec))
        } else {
            terminal.line(Help.usage)
        }
        return .success
    }
}

/// `mappack --version` (also `-V`, `version`).
enum VersionCommand {
    static func run(terminal: Terminal) -> ExitCode {
        let libraries = [
            CurlTransfer.libraryVersion, ArchiveWriter.libraryVersion, Zstd.libraryVersion,
            SQLiteDatabase.libraryVersion, YAMLDocument.libraryVersion, SHA256.libraryVersion,
        ]
        if terminal.json {
            terminal.record(VersionRecord(version: MappackVersion.current, libraries: libraries))
        } else {
            terminal.line(Help.version(libraries: libraries))
        }
        return .success
    }
}
