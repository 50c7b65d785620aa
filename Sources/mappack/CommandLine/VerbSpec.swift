/// What one verb takes, declared once: parsing, `--help`, `mappack help`, "did you mean",
/// shell completions and the man page are all made from it.
struct VerbSpec: Sendable {
    /// One `--option` (with a value) or `--flag` (without).
    struct Option: Sendable {
        let name: String
        let short: Character?
        /// The value's placeholder (`DIR`, `N`), nil for a flag.
        let value: String?
        let help: String
        /// What a shell should complete the value with.
        let completion: Completion

        enum Completion: Sendable { case none, file, directory }

        init(_ name: String, short: Character? = nil, value: String? = nil, _ help: String, completion: Completion = .none) {
            self.name = name
            self.short = short
            self.value = value
            self.help = help
            self.completion = completion
        }

        var isFlag: Bool { value == nil }
        /// `-j, --jobs N` as help shows it.
        var synopsis: String { (short.map { "-\($0), " } ?? "") + "--" + name + (value.map { " " + $0 } ?? "") }
    }

    let name: String
    /// The positional arguments as help shows them (`RECIPE`, `SHARD...`).
    let positionals: String
    let summary: String
    let options: [Option]
    /// What a shell completes the first positional argument with.
    var words: Words = .files

    /// The first positional's completions: file names, or a closed list of words.
    enum Words: Sendable {
        case files
        /// mappack's own verbs (`help VERB`).
        case verbs
        case list([String])
    }

    /// The options every verb takes besides its own.
    static let common: [Option] = [
        Option("json", "Print JSON lines tagged with their schema in Schemas/: events as work goes, or one object per answer"),
        Option("quiet", short: "q", "Print only results and errors: no progress, warnings or notes"),
        Option("verbose", short: "v", "Print more: off a terminal, a progress line every second instead of every 5"),
        Option("help", short: "h", "Show this verb's options and exit"),
    ]

    /// The verb's own options followed by the common ones it does not redefine.
    var allOptions: [Option] { options + VerbSpec.common.filter { common in !options.contains { $0.name == common.name } } }

    /// The option with this long name or short letter.
    func option(named name: String) -> Option? { allOptions.first { $0.name == name } }
    func option(short: Character) -> Option? { allOptions.first { $0.short == short } }
}
