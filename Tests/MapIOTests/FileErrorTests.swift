import Foundation
import MapIO
import Testing

/// `FileError`'s message is what users read: the path, the operation's word and its note, the
/// system's wording of `errno`, and a hint for the errors a user can act on.
@Suite struct FileErrorTests {
    @Test func theMessageNamesPathOperationNoteAndErrno() {
        let early = FileError(.read, note: "(file ends early)", "/data/a.db", code: EIO)
        #expect(early.description == "/data/a.db: read (file ends early) failed: Input/output error")
        #expect(early.operation == .read && early.code == EIO && early.cause == Errno(EIO))

        let full = FileError(.write, "/data/b.db", code: ENOSPC)
        #expect(full.description == "/data/b.db: write failed: No space left on device; free space on that filesystem")

        let taken = FileError(.takeIn, note: "(not one name in /s)", "/s/a/b", code: EINVAL)
        #expect(taken.action == "take in (not one name in /s)")
        #expect(FileError(.rename, note: "to /b", "/a", code: ENOENT).isNotFound)
    }
}
