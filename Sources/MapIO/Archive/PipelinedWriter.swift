import Foundation
import Synchronization

extension SafeExtractor {
    /// Writes an extraction's folders and files on a thread of its own while the extracting thread
    /// decodes, checks and hashes the entries after them, as `zstd -dc | tar -x` splits the work
    /// between two processes: file creation is most of an unpack's time, and a thread that waits in
    /// the kernel there (the journal, a folder's lock) no longer stops the decoding.
    ///
    /// The extracting thread fills batches (a list of operations and a buffer holding their file
    /// data, copied out of the decoder's output) and hands each one over whole, so a bundle of
    /// thousands of small files costs a handful of hand-overs, not one per file. At most
    /// `PipelinedWriter.batches` batches exist per extraction, which bounds its memory.
    ///
    /// `@unchecked Sendable`: `target` and `failure` belong to the writing thread until `finish`
    /// has waited for it; `filling` belongs to the extracting thread.
    final class PipelinedWriter: @unchecked Sendable {
        /// One step of the writing, in entry order.
        private enum Operation {
            case folder(String)
            case open(String)
            /// Bytes of the batch's buffer appended to the file opened last.
            case data(start: Int, count: Int)
            case close
        }

        /// Operations and the file bytes they write.
        @safe private final class Batch: @unchecked Sendable {
            var operations: [Operation] = []
            let buffer: UnsafeMutableRawBufferPointer
            var used = 0

            init() {
                unsafe buffer = ScratchBuffers.take(PipelinedWriter.batchBytes)
                operations.reserveCapacity(256)
            }

            deinit { unsafe ScratchBuffers.give(buffer) }

            var room: Int { unsafe buffer.count - used }
        }

        /// Bytes of file data a batch holds, and batches per extraction (filled, queued, written):
        /// 512 KiB in all per extraction, a few hundred hand-overs for a bundle of 1.3 MiB.
        private static let batchBytes = 128 << 10
        private static let batches = 4

        private var target: Target
        private var failure: ArchiveError?
        private let filled = BlockingQueue<Batch>(capacity: PipelinedWriter.batches - 2)
        private let spare = BlockingQueue<Batch>()
        private let stopped = Atomic<Bool>(false)
        private let done = DispatchSemaphore(value: 0)
        private var filling: Batch?

        /// Starts the writing thread for `target`.
        init(target: Target) {
            self.target = target
            for _ in 0..<PipelinedWriter.batches { spare.push(Batch()) }
            let thread = Thread { [self] in
                write()
                done.signal()
            }
            thread.name = "unpack writer"
            thread.start()
        }

        /// True once the writing thread has failed: what is handed over after is dropped.
        var hasFailed: Bool { stopped.load(ordering: .acquiring) }

        /// Creates the folder `relative` (and any missing above it), after what was handed over before.
        func makeFolder(_ relative: String) {
            append(.folder(relative), bytes: 0)
        }

        /// Creates the new file `path`, open for the `write`s after it until `close`.
        func open(_ path: String) {
            append(.open(path), bytes: 0)
        }

        /// Appends `bytes` to the file opened last (copied: the decoder reuses its buffer).
        func write(_ bytes: UnsafeRawBufferPointer) {
            var rest = unsafe bytes
            while unsafe !rest.isEmpty {
                let batch = current(needing: 1)
                let count = min(rest.count, batch.room)
                unsafe (batch.buffer.baseAddress! + batch.used).copyMemory(from: rest.baseAddress!, byteCount: count)
                batch.operations.append(.data(start: batch.used, count: count))
                batch.used += count
                unsafe rest = UnsafeRawBufferPointer(rebasing: rest[count...])
            }
        }

        /// Closes the file opened last.
        func close() {
            append(.close, bytes: 0)
        }

        /// Hands over what is left and waits for the writing thread to end, with `discarding` after
        /// dropping what it has not written yet. Returns the target (what was created, for a
        /// rollback) and the writing's first failure.
        func finish(discarding: Bool = false) -> (target: Target, failure: ArchiveError?) {
            if let filling, !discarding, !filling.operations.isEmpty { filled.push(filling) }
            filling = nil
            filled.close(discarding: discarding)
            done.wait()
            return (target, failure)
        }

        private func append(_ operation: Operation, bytes: Int) {
            current(needing: bytes).operations.append(operation)
        }

        /// The batch being filled, handed over and replaced first when it has no room for `bytes`
        /// more or holds many operations already.
        private func current(needing bytes: Int) -> Batch {
            if let filling, filling.room >= bytes, filling.operations.count < 1024 { return filling }
            if let filling { filled.push(filling) }
            // A spare always comes back: the writing thread returns each batch, also after failing.
            let next = spare.pop()!
            filling = next
            return next
        }

        /// The writing thread: each batch's operations in order; after a failure, batches are only
        /// given back.
        private func write() {
            var file: FileDescriptor?
            var path = ""
            while let batch = filled.pop() {
                if failure == nil {
                    do throws(ArchiveError) {
                        for operation in batch.operations {
                            switch operation {
                            case .folder(let relative):
                                try target.makeFolder(relative, for: relative)
                            case .open(let name):
                                path = name
                                file = try target.create(name)
                            case .data(let start, let count):
                                try unsafe target.write(
                                    UnsafeRawBufferPointer(rebasing: batch.buffer[start..<(start + count)]), to: file!, path: path)
                            case .close:
                                let written = file!
                                file = nil
                                try target.finish(written, path: path)
                            }
                        }
                    } catch {
                        failure = error
                        try? file?.close()
                        file = nil
                        stopped.store(true, ordering: .releasing)
                    }
                }
                batch.operations.removeAll(keepingCapacity: true)
                batch.used = 0
                spare.push(batch)
            }
            try? file?.close()
        }
    }
}
