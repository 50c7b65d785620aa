import Foundation
import MapIO

/// The chunks a device already has (issue 21): its old files' plain tar cut as the publisher cut
/// the new bundle (`ChunkCutter`, databases on their pages when the catalog says so) and each piece
/// compressed as libzck compresses a chunk (`ZstdChunkCompressor`), the frames written one after
/// another to a seed file and found by digest. A chunk of the new bundle whose digest is here is
/// copied from the seed; libzck then checks it as it checks a chunk fetched by range.
///
/// Not a `.zck` through libzck: its writer keeps a temporary data file and its `zck_copy_chunks`
/// copies through a `static` buffer, so two bundles' copies at once mixed their bytes (they were
/// serialized); here every copy has its own buffer.
package struct SeedChunks: Sendable {
    /// The seed file.
    package let path: String
    /// Where each chunk's frame is in the seed file, by digest (the first of equal ones).
    let frames: [ChunkDigest: Frame]

    struct Frame: Sendable {
        let offset: Int64
        let length: Int
    }

    /// Cuts and compresses the tar at `tar` as `parameters` say into a new seed file at `path`.
    package static func write(tar: String, to path: String, parameters: Zchunk.Parameters) throws(ZchunkError) -> SeedChunks {
        let output: FileDescriptor
        do { output = try unsafe FileDescriptor.open(path, .readWrite, options: [.create, .truncate]) } catch {
            throw .io(FileError(.create, path, code: error.code))
        }
        defer { try? output.close() }
        let compressor: ZstdChunkCompressor
        do { compressor = try ZstdChunkCompressor(level: parameters.level) } catch {
            throw .library(what: "start compressing", path: path, message: error.description)
        }
        var frames: [ChunkDigest: Frame] = [:]
        var written: Int64 = 0
        func add(_ piece: UnsafeRawBufferPointer) throws(ZchunkError) {
            do {
                try unsafe compressor.compress(piece) { frame, digest in
                    try unsafe output.writeAll(toAbsoluteOffset: written, frame)
                    if frames[digest] == nil { frames[digest] = Frame(offset: written, length: frame.count) }
                    written += Int64(frame.count)
                }
            } catch let error as Errno {
                throw .io(FileError(.write, path, code: error.code))
            } catch {
                throw .library(what: "compress the seed", path: path, message: "\(error)")
            }
        }
        /// A chunk that one read of the tar began and a later one ends.
        var pending: [UInt8] = []
        func addPending() throws(ZchunkError) {
            try unsafe pending.withUnsafeBytes { bytes in Result { () throws(ZchunkError) in try unsafe add(bytes) } }.get()
            pending.removeAll(keepingCapacity: true)
        }
        try unsafe ChunkCutter.forEachPart(ofTar: tar, parameters) { part, endsChunk in
            if endsChunk, pending.isEmpty { return try unsafe add(part) }
            unsafe pending.append(contentsOf: part)
            if endsChunk { try addPending() }
        }
        if !pending.isEmpty { try addPending() }
        return SeedChunks(path: path, frames: frames)
    }
}
