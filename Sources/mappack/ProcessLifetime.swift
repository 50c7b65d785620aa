import Synchronization

/// Values a command keeps until the process exits, instead of freeing them when it returns: the
/// CLI exits right after, and freeing a planet catalog's tens of thousands of strings, arrays and
/// dictionaries one by one cost ~5 % of `mappack plan` for nothing (the kernel takes the pages
/// back at once).
enum ProcessLifetime {
    private static let kept = Mutex<[any Sendable]>([])

    /// Keeps `value` alive until the process exits.
    static func keep(_ value: any Sendable) {
        kept.withLock { $0.append(value) }
    }
}
