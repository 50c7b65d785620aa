import CLinux
import Synchronization

/// Starts a finished file's writeback early: the disk takes a tree's writes while the CPUs go on
/// decompressing, hashing or copying the next files, so the `syncfs` (or the fsyncs) that make the
/// tree durable before its rename (`FileSystem.syncTree`) find little left to write. It is not
/// durable on its own (no metadata, no flush of the disk's cache): every tree written with it is
/// still synced as a whole before anything shows it.
///
/// A value writers take, so a test can count what a writer asks for (`counting(into:)`) without
/// tracing system calls.
package struct Writeback: Sendable {
    private let counter: Counter?
    private var enabled = true

    /// Asks the kernel: `sync_file_range` with `SYNC_FILE_RANGE_WRITE` on Linux. Elsewhere (and
    /// with `MAPPACK_PORTABLE`) there is no such call and nothing is done: the final sync writes
    /// everything, as before.
    package static let kernel = Writeback(counter: nil)

    /// Asks nothing: for trees that are never synced (a build's outputs without `--sync`), where an
    /// early writeback only splits the disk's writes and keeps the writers waiting for it.
    package static let none = Writeback(counter: nil, enabled: false)

    /// As `kernel`, and counts every file it is asked to start in `counter`.
    package static func counting(into counter: Counter) -> Writeback { Writeback(counter: counter) }

    /// Starts writing `file`'s dirty pages without waiting for them. A failure is not reported
    /// here: the final sync of the tree reports a write that failed.
    package func start(_ file: FileDescriptor) {
        guard enabled else { return }
        counter?.add()
        #if os(Linux) && !MAPPACK_PORTABLE
            _ = mp_start_writeback(file.rawValue)
        #endif
    }

    /// `start` for the file at `path`, written and closed by someone else (SQLite): opened read-only for
    /// the call. A file that cannot be opened is left to the final sync, which reports what failed.
    package func start(path: String) {
        guard enabled, let file = try? unsafe FileDescriptor.open(path, .readOnly) else { return }
        start(file)
        try? file.close()
    }

    /// How many files a `counting` writeback was asked to start.
    package final class Counter: Sendable {
        private let value = Atomic<Int>(0)

        /// A count at 0.
        package init() {}

        /// Files started so far.
        package var count: Int { value.load(ordering: .relaxed) }

        fileprivate func add() { value.add(1, ordering: .relaxed) }
    }
}
