import Foundation
import MapBuild
import MapFormat
import MapStore
import Synchronization

/// `mappack store VERB --storage S --cache C`: drives MapStore on folders as a device would. Each
/// store verb is a subcommand declared in `Verbs.Store` with its own options, and runs in its own
/// function (`StoreCommand+Verbs.swift`, `StoreCommand+Transfers.swift`).
enum StoreCommand {
    static func run(_ raw: [String], terminal: Terminal) async throws -> ExitCode {
        // `mappack -q store install …` puts the options every verb takes first; the verb comes after them.
        let global = raw.prefix { Mappack.isGlobalOption($0) }
        let rest = raw.dropFirst(global.count)
        guard let name = rest.first else { throw UsageError(message: Help.verb(Verbs.store)) }
        if ["help", "--help", "-h"].contains(name) {
            let asked = rest.dropFirst().first.flatMap { Verbs.store.subcommand(named: $0) }
            terminal.line(Help.verb(asked ?? Verbs.store))
            return .success
        }
        guard let (verb, body) = verbs.first(where: { $0.spec.name == name }) else {
            let names = Verbs.store.subcommands.map(\.name)
            let suggestion = Spelling.nearest(to: name, among: names).map { "; did you mean '\($0)'?" } ?? ""
            throw UsageError(message: "unknown store verb '\(name)'\(suggestion)\n" + Help.storeVerbs)
        }
        let context = try Context(verb: verb, arguments: try Arguments(Array(global + rest.dropFirst()), verb: verb), terminal: terminal)
        // SIGINT and SIGTERM cancel the store work under way (`waitFor`): it stops as the library stops a
        // cancelled call, and the command says what was kept and exits 128 + the signal.
        interruptOutcome.withLock { $0 = outcome(ofInterrupted: verb.name) }
        let sources = Interrupts.watch { running.withLock { $0 }?() }
        defer { for source in sources { source.cancel() } }
        return try await body(context)
    }

    /// Every store verb with the function that runs it, in the order help lists them: `Verbs.Store.verbs`
    /// comes from here, so no verb is declared without a command.
    static var verbs: [(spec: VerbSpec, run: (Context) async throws -> ExitCode)] {
        [
            (Verbs.Store.install, install), (Verbs.Store.status, status), (Verbs.Store.repair, repair), (Verbs.Store.regions, regions),
            (Verbs.Store.delete, delete), (Verbs.Store.verify, verify), (Verbs.Store.cacheVerb, cache), (Verbs.Store.move, move),
            (Verbs.Store.update, update), (Verbs.Store.download, download), (Verbs.Store.available, available),
            (Verbs.Store.version, version), (Verbs.Store.catalogs, catalogs),
        ]
    }

    /// What every store verb starts from: its parsed arguments, the two folders, and the store
    /// options they give.
    struct Context {
        let verb: VerbSpec
        let arguments: Arguments
        let terminal: Terminal
        let storage: String
        let cache: String
        let image: PreinstalledImage?
        let options: MapStore.Options

        init(verb: VerbSpec, arguments: Arguments, terminal: Terminal) throws {
            guard let storage = arguments.option(Verbs.Store.storage), let cache = arguments.option(Verbs.Store.cache) else {
                throw UsageError(message: "mappack store \(verb.name) needs --storage DIR and --cache DIR")
            }
            self.verb = verb
            self.arguments = arguments
            self.terminal = terminal
            self.storage = storage
            self.cache = cache
            // `--image` is one of install's, status' and repair's options; the key is its name.
            image = arguments.option(Verbs.Store.image).map { PreinstalledImage(url: URL(fileURLWithPath: $0)) }
            let trusted = try arguments.option(Verbs.trust).map { [try KeyFiles.read($0)] } ?? []
            options = MapStore.Options(
                fullValidation: arguments.flag(Verbs.Store.full), trustedPublicKeys: trusted, now: try CommandClock.check(),
                useImageInPlace: arguments.flag(Verbs.Store.inPlace))
        }

        /// Opens the store, saying once when it waits for another process writing the same storage
        /// (an app, another mappack).
        func open() async throws -> MapStore {
            let said = Atomic<Bool>(false)
            let terminal = terminal
            MapStore.waitingForOtherProcess.withLock { hooks in
                hooks["mappack store"] = { folder in
                    guard !said.exchange(true, ordering: .relaxed) else { return }
                    terminal.note("waiting for another process using \(folder)… (this one goes on when it is done)")
                }
            }
            let (storage, cache, image, options) = (storage, cache, image, options)
            return try await waitFor {
                try await MapStore.open(
                    storage: URL(fileURLWithPath: storage, isDirectory: true), cache: URL(fileURLWithPath: cache, isDirectory: true),
                    preinstalled: image, options: options)
            }
        }
    }

    /// The store work under way, which the first SIGINT or SIGTERM cancels.
    private static let running = Mutex<(@Sendable () -> Void)?>(nil)
    /// What an interrupted run of the current verb keeps, and how to go on.
    private static let interruptOutcome = Mutex("stopped before its commit; the storage is as it was")

    /// What an interrupted `verb` leaves, for its message.
    static func outcome(ofInterrupted verb: String) -> String {
        switch verb {
        case Verbs.Store.download.name:
            "the download stopped; the bytes fetched so far are kept and its regions are paused; run the same command again to resume"
        case Verbs.Store.update.name:
            "the update stopped; the installed version stays and the bytes fetched so far are kept; run the same command again to resume"
        case Verbs.Store.install.name: "the install stopped; the storage is left empty; run the same command again to install"
        case Verbs.Store.repair.name: "the repair stopped between steps; what it finished stays; run `mappack store repair` again to go on"
        case Verbs.Store.move.name: "the move stopped; the storage stays where it was; run the same command again to move it"
        default: "stopped before its commit; the storage is as it was"
        }
    }

    /// Runs store work as a task of its own that the first SIGINT or SIGTERM cancels (as an app cancels
    /// a call), and awaits it: no thread blocks on it. When the work then fails, `InterruptedError` says
    /// what was kept.
    static func waitFor<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = Task { try await body() }
        running.withLock { $0 = { task.cancel() } }
        // A signal before the work began stops it at once.
        if Interrupts.received.withLock({ $0 }) != nil { task.cancel() }
        let outcome = await task.result
        running.withLock { $0 = nil }
        if case .failure = outcome, let number = Interrupts.received.withLock({ $0 }) {
            throw InterruptedError(signal: number, outcome: interruptOutcome.withLock { $0 })
        }
        return try outcome.get()
    }

    /// What to do about a store that is not ok, as a command to run.
    /// With `catalogKnown`, a plain repair can fetch damaged files again; without, it needs the image.
    static func advice(for status: StoreStatus, storage: String, cache: String, catalogKnown: Bool) -> String? {
        let plainRepair = "mappack store repair --storage \(storage) --cache \(cache)"
        let repair = "mappack store repair --image IMAGE --storage \(storage) --cache \(cache)"
        // Not a switch: a status added to MapStore gets the general advice instead of breaking the build.
        if status == .ok || status == .empty { return nil }
        if status == .corrupted {
            if !catalogKnown {
                return "installed files or the kept manifest do not match the state database; restore them from the image they came from: \(repair)"
            }
            return "installed files or the kept manifest do not match the state database; restore them: \(plainRepair) "
                + "(from the download cache or the catalog's server; add --image IMAGE to restore from the image they came from)"
        }
        if status == .interruptedInstall {
            return "an install was interrupted; finish it with the image it installed: \(repair)"
        }
        if status == .interruptedOperation {
            return "work was interrupted; finish or roll it back: \(plainRepair)"
        }
        if status == .versionMismatch {
            return "the state database is of an unknown format, or the image offered has another map version than the store; "
                + "offer the image of the store's version (\(repair)) or update the store (mappack store update)"
        }
        return "the store is not ok (\(StoreMessages.words(for: status))); run \(repair)"
    }
}
