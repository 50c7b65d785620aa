/// What one verb takes, declared once: parsing, `--help`, `mappack help`, "did you mean",
/// shell completions and the man page are all made from it. A verb with `subcommands` (`store`)
/// is a word before them: each subcommand is a verb of its own, with its own options.
struct VerbSpec: Sendable {
    /// One `--option` (with a value) or `--flag` (without). An `Arguments` is asked for an
    /// option by this value (its long name is the key), so options are named once.
    struct Option: Sendable {
        let name: String
        let short: Character?
        /// The value's placeholder (`DIR`, `N`), nil for a flag.
        let value: String?
        let help: String
        /// What a shell should complete the value with.
        let completion: Completion
        /// The verb does not run without it (`Arguments.required` says so); shown without brackets.
        let required: Bool

        enum Completion: Sendable { case none, file, directory }

        init(
            _ name: String, short: Character? = nil, value: String? = nil, _ help: String, completion: Completion = .none, required: Bool = false
        ) {
            self.name = name
            self.short = short
            self.value = value
            self.help = help
            self.completion = completion
            self.required = required
        }

        var isFlag: Bool { value == nil }
        /// `-j, --jobs N` as help shows it.
        var synopsis: String { (short.map { "-\($0), " } ?? "") + "--" + name + (value.map { " " + $0 } ?? "") }
        /// `--image PATH`, or `[--full]` when it may be left out, as a usage line shows it.
        var usage: String {
            let text = "--" + name + (value.map { " " + $0 } ?? "")
            return required ? text : "[" + text + "]"
        }
    }

    let name: String
    /// The verb this one is a subcommand of (`store` for `store install`).
    var parent: String? = nil
    /// The positional arguments as help shows them (`RECIPE`, `SHARD...`).
    let positionals: String
    let summary: String
    let options: [Option]
    /// Options a subcommand takes from its parent (`--storage` for every store verb).
    var inherited: [Option] = []
    /// The verbs after this word (`store install`); none for most verbs.
    var subcommands: [VerbSpec] = []
    /// A last paragraph of `--help` (a subcommand's exit codes).
    var notes: String? = nil
    /// What a shell completes the first positional argument with.
    var words: Words = .files

    /// The first positional's completions: file names, or a closed list of words.
    enum Words: Sendable {
        case files
        /// Recipe files (`*.yaml`, `*.yml`) and folders (`build RECIPE`, `plan RECIPE`).
        case recipes
        /// mappack's own verbs (`help VERB`).
        case verbs
        case list([String])

        /// True for `recipes`.
        var isRecipes: Bool {
            if case .recipes = self { return true }
            return false
        }
    }

    /// The options every verb takes besides its own.
    static let common: [Option] = [
        Option("json", "Print JSON lines tagged with their schema in Schemas/: events as work goes, or one object per answer"),
        Option("quiet", short: "q", "Print only results and errors: no progress, warnings or notes"),
        Option("verbose", short: "v", "Print more: off a terminal, a progress line every second instead of every 5"),
        Option("help", short: "h", "Show this verb's options and exit"),
    ]

    /// The whole command as typed after `mappack` (`store install`).
    var command: String { parent.map { $0 + " " + name } ?? name }

    /// The verb's own options, then its parent's, then the common ones it does not redefine.
    var allOptions: [Option] {
        let own = options + inherited
        return own + VerbSpec.common.filter { common in !own.contains { $0.name == common.name } }
    }

    /// Every option a shell may complete after this verb: its own and its subcommands'.
    var completionOptions: [Option] {
        var seen = Set<String>()
        return (allOptions + subcommands.flatMap(\.options)).filter { seen.insert($0.name).inserted }
    }

    /// `--image PATH [--full]`: the positionals and own options, as a usage line shows them.
    var usage: String { ([positionals] + options.map(\.usage)).filter { !$0.isEmpty }.joined(separator: " ") }

    /// The subcommand with this name.
    func subcommand(named name: String) -> VerbSpec? { subcommands.first { $0.name == name } }

    /// The option with this long name or short letter.
    func option(named name: String) -> Option? { allOptions.first { $0.name == name } }
    func option(short: Character) -> Option? { allOptions.first { $0.short == short } }
}
