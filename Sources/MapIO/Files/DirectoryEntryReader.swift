import CLinux
import Foundation
import Synchronization

/// Reads the entries of an open folder in the fastest way the platform offers: on Linux,
/// `getdents64` into one reused buffer, parsed in place (no `DIR` stream, whose `fdopendir` costs
/// an `fstat` and two `fcntl` per folder); elsewhere, or built with `-DMAPPACK_PORTABLE`, POSIX
/// `fdopendir`/`readdir` on a duplicate of the descriptor. Both give each entry's name and the
/// `d_type` the folder reports (`DT_UNKNOWN` where the filesystem does not say); `.` and `..` are
/// left out.
package struct DirectoryEntryReader {
    /// Where `getdents64` puts a folder's entries.
    private var buffer = [UInt8](repeating: 0, count: 32 << 10)

    /// Tests set this to run the portable listing on Linux too.
    package static var forcePortable: Bool {
        get { portableOverride.load(ordering: .relaxed) }
        set { portableOverride.store(newValue, ordering: .relaxed) }
    }
    private static let portableOverride = Atomic<Bool>(false)

    package init() {}

    /// Whether this build lists folders with `getdents64`.
    package static var usesGetdents: Bool {
        #if os(Linux) && !MAPPACK_PORTABLE
            return !forcePortable
        #else
            return false
        #endif
    }

    /// Calls `body` with each entry's NUL-terminated name, its length and its `d_type`; a failure
    /// `body` returns ends the listing and is returned. An error reading the folder ends the
    /// listing as it ends `readdir`'s.
    package mutating func forEachEntry(
        of folder: FileDescriptor,
        _ body: (UnsafePointer<CChar>, Int, UInt8) -> FileError?
    ) -> FileError? {
        #if os(Linux) && !MAPPACK_PORTABLE
            if !DirectoryEntryReader.forcePortable { return unsafe readWithGetdents(folder, body) }
        #endif
        return unsafe readPortably(folder, body)
    }

    #if os(Linux) && !MAPPACK_PORTABLE
        private mutating func readWithGetdents(_ folder: FileDescriptor, _ body: (UnsafePointer<CChar>, Int, UInt8) -> FileError?) -> FileError? {
            unsafe buffer.withUnsafeMutableBytes { (entries: UnsafeMutableRawBufferPointer) -> FileError? in
                // struct linux_dirent64: inode, offset, record length, type, NUL-terminated name.
                let lengthOffset = 16
                let typeOffset = 18
                let nameOffset = 19
                while true {
                    let filled: Int
                    do throws(Errno) {
                        filled = try FileDescriptor.retryOnInterrupt { unsafe mp_getdents64(folder.rawValue, entries.baseAddress, entries.count) }
                    } catch {
                        return nil
                    }
                    guard filled > 0 else { return nil }
                    var record = 0
                    while record < filled {
                        let entry = unsafe UnsafeRawPointer(entries.baseAddress! + record)
                        unsafe record += Int(entry.loadUnaligned(fromByteOffset: lengthOffset, as: UInt16.self))
                        let name = unsafe (entry + nameOffset).assumingMemoryBound(to: CChar.self)
                        let length = unsafe strlen(name)
                        if unsafe DirectoryEntryReader.isDotOrDotDot(name, length) { continue }
                        if let failure = unsafe body(name, length, entry.load(fromByteOffset: typeOffset, as: UInt8.self)) { return failure }
                    }
                }
            }
        }
    #endif

    private func readPortably(_ folder: FileDescriptor, _ body: (UnsafePointer<CChar>, Int, UInt8) -> FileError?) -> FileError? {
        // `closedir` closes the descriptor it was given: hand it a duplicate (same offset).
        let duplicate = fcntl(folder.rawValue, F_DUPFD_CLOEXEC, 0)
        guard duplicate >= 0, let stream = unsafe fdopendir(duplicate) else {
            if duplicate >= 0 { close(duplicate) }
            return nil
        }
        defer { unsafe closedir(stream) }
        while let entry = unsafe readdir(stream) {
            let type = unsafe entry.pointee.d_type
            let failure = unsafe withUnsafeBytes(of: &entry.pointee.d_name) { raw -> FileError?? in
                let name = unsafe raw.baseAddress!.assumingMemoryBound(to: CChar.self)
                let length = unsafe strlen(name)
                if unsafe DirectoryEntryReader.isDotOrDotDot(name, length) { return .some(nil) }
                return unsafe .some(body(name, length, type))
            }
            if let failure = failure ?? nil { return failure }
        }
        return nil
    }

    private static func isDotOrDotDot(_ name: UnsafePointer<CChar>, _ length: Int) -> Bool {
        unsafe name[0] == CChar(UInt8(ascii: ".")) && (length == 1 || (length == 2 && name[1] == CChar(UInt8(ascii: "."))))
    }
}
