import CZck
import Foundation
import MapFormat
import MapIO
import Synchronization

/// The one place libzck is called (issue 21): compressing a `.tar` into a `.zck`, and reading a
/// `.zck` header to learn which chunks a file still lacks, copying chunks from a seed and checking them.
package enum Zchunk {
    /// What `compress` wrote.
    package struct Written: Sendable {
        /// Bytes of the header at the start of the file.
        package let headerSize: Int64
        /// Bytes of the whole file.
        package let size: Int64
    }

    /// How a bundle is cut and compressed: a device cuts and compresses its old files the same way
    /// to find the chunks it already has (other parameters find almost none, and the update fetches
    /// nearly everything by range), so the publisher records them in the catalog (`ChunkedBundle`'s
    /// `chunkSize`, `minChunk`, `maxChunk`, `normalization`, `level`, `sqlitePages`) and the device
    /// takes them from there.
    package struct Parameters: Sendable, Equatable {
        /// The chunk size aimed at, in bytes (a power of two; see `ChunkCutter`).
        package var chunkSize: Int
        /// No chunk is shorter (but a file's last).
        package var minChunk: Int
        /// No chunk is longer.
        package var maxChunk: Int
        /// `ChunkCutter`'s normalization level (0: the first publishers' plain cut).
        package var normalization: Int
        /// The zstd level of every chunk.
        package var level: Int32
        /// SQLite databases in the tar are cut every `chunkSize` bytes from their start (`SQLitePages`).
        package var sqlitePages: Bool

        package init(chunkSize: Int, minChunk: Int, maxChunk: Int, normalization: Int, level: Int32, sqlitePages: Bool = false) {
            self.chunkSize = chunkSize
            self.minChunk = minChunk
            self.maxChunk = maxChunk
            self.normalization = normalization
            self.level = level
            self.sqlitePages = sqlitePages
        }

        /// The parameters a catalog's `chunked` form names (its defaults where it names none: the
        /// first publishers' 8 KiB plain cut at level 6). `RegionTree` has refused a catalog whose
        /// values are out of range; such values fall back to the defaults here all the same, so no
        /// value can make a device loop or allocate without bound.
        package init(_ chunked: ChunkedBundle) {
            var checked = chunked
            if checked.parameterProblem != nil {
                checked = ChunkedBundle(url: chunked.url, size: chunked.size, headerSize: chunked.headerSize, headerSHA256: chunked.headerSHA256)
            }
            self.init(
                chunkSize: checked.effectiveChunkSize, minChunk: checked.effectiveMinChunk, maxChunk: checked.effectiveMaxChunk,
                normalization: checked.effectiveNormalization, level: Int32(checked.effectiveLevel),
                sqlitePages: checked.effectiveSQLitePages)
        }

        /// The `chunked` fields that record these parameters (all of them, defaults included).
        package func recorded(in chunked: ChunkedBundle) -> ChunkedBundle {
            var out = chunked
            out.chunkSize = chunkSize
            out.minChunk = minChunk
            out.maxChunk = maxChunk
            out.normalization = normalization
            out.level = Int(level)
            out.sqlitePages = sqlitePages
            return out
        }

        /// The smallest and largest chunk size `publisher(tarSize:)` picks.
        package static let publisherChunkSizes = 1024...(8 << 10)
        /// `publisher(tarSize:)` aims at this many chunks a bundle, within `publisherChunkSizes`.
        package static let publisherChunksPerBundle = 64

        /// What `mappack publish --chunked` uses for a bundle whose plain tar has `tarSize` bytes:
        /// normalized cuts (level 1: from a quarter to four times the chunk size), at zstd level 6
        /// as plain bundles (measured on the demo world's bundles in 8 KiB chunks, libzck's default
        /// 16 made them 0.7% smaller but compressed at 8 MB/s against 82 MB/s, and a device pays that
        /// speed on every update). The chunk size is a 64th of the tar (a power of two, 1 to 8 KiB):
        /// a small bundle's edits cost it a larger share, and its smaller chunks cost few bytes in all;
        /// SQLite databases are cut on their pages. See Benchmarks/HISTORY.md, "What was tried". `MAPPACK_ZCK_CHUNK=BYTES` (a power of two from 1 KiB to
        /// 1 MiB) is the publisher's choice of one size for every bundle (`Benchmarks/chunked.sh
        /// --chunk`); devices read the parameters from the catalog, never from the environment.
        package static func publisher(tarSize: Int64) -> Parameters {
            var size = publisherChunkSizes.lowerBound
            while size < publisherChunkSizes.upperBound, Int64(size) * 2 * Int64(publisherChunksPerBundle) <= tarSize { size *= 2 }
            if let fixed = fixedPublisherChunkSize { size = fixed }
            return Parameters(
                chunkSize: size, minChunk: size / 4, maxChunk: size * 4, normalization: 1, level: Int32(ChunkedBundle.defaultLevel),
                sqlitePages: true)
        }

        /// `MAPPACK_ZCK_CHUNK`, when it names a usable chunk size.
        package static let fixedPublisherChunkSize: Int? = {
            guard let text = ProcessInfo.processInfo.environment["MAPPACK_ZCK_CHUNK"], let bytes = Int(text),
                ChunkedBundle.chunkSizeProblem(bytes) == nil
            else { return nil }
            return bytes
        }()
    }

    /// Compresses the tar at `input` into a new `.zck` at `output` with content-defined chunks
    /// (`parameters`; SHA-512/128 chunk digests, SHA-256 data digest), SQLite databases cut on their
    /// pages when `parameters.sqlitePages`. The same input, parameters and libzck (and libzstd) give
    /// the same bytes.
    package static func compress(_ input: String, to output: String, parameters: Parameters) throws(ZchunkError) -> Written {
        let file: FileDescriptor
        do { file = try unsafe FileDescriptor.open(output, .readWrite, options: [.create, .truncate]) } catch {
            throw .io(FileError(.create, output, code: error.code))
        }
        defer { try? file.close() }
        guard let zck = unsafe zck_create() else { throw .library(what: "create", path: output, message: "out of memory") }
        var context: OpaquePointer? = unsafe zck
        defer { unsafe zck_free(&context) }
        guard unsafe zck_init_write(zck, file.rawValue) else { throw unsafe failure("start writing", output, zck) }
        guard unsafe zck_set_ioption(zck, ZCK_ZSTD_COMP_LEVEL, Int(parameters.level)) else { throw unsafe failure("set the zstd level", output, zck) }
        guard unsafe zck_set_ioption(zck, ZCK_MANUAL_CHUNK, 1) else { throw unsafe failure("choose manual chunks", output, zck) }
        try unsafe ChunkCutter.forEachPart(ofTar: input, parameters) { part, endsChunk in
            try unsafe write(zck, part, output)
            if endsChunk, unsafe zck_end_chunk(zck) < 0 { throw unsafe failure("end a chunk", output, zck) }
        }
        guard unsafe zck_close(zck) else { throw unsafe failure("finish", output, zck) }
        let header = unsafe zck_get_header_length(zck)
        let data = unsafe zck_get_data_length(zck)
        guard header > 0, data >= 0 else { throw unsafe failure("measure", output, zck) }
        return Written(headerSize: Int64(header), size: Int64(header) + Int64(data))
    }

    private static func write(_ zck: OpaquePointer, _ bytes: UnsafeRawBufferPointer, _ output: String) throws(ZchunkError) {
        guard unsafe !bytes.isEmpty else { return }
        let written = unsafe zck_write(zck, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count)
        if written != bytes.count { throw unsafe failure("write", output, zck) }
    }

    private static func failure(_ what: String, _ path: String, _ zck: OpaquePointer?) -> ZchunkError {
        let message = unsafe zck.flatMap { unsafe zck_get_error($0) }.map { unsafe String(cString: $0) } ?? "unknown error"
        if let zck = unsafe zck { _ = unsafe zck_clear_error(zck) }
        return .library(what: what, path: path, message: message.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// A `.zck` being assembled at `path`: its header (already checked against the catalog) is
    /// written first, then chunks arrive from a seed or by range; libzck says which are valid.
    /// Sendable by hand: a range's bytes are written (`pwrite`) from the transfer thread while the
    /// owning task awaits that transfer, and libzck is only called from the owning task.
    @safe package final class Target: @unchecked Sendable {
        /// The file being assembled.
        package let path: String
        private let file: FileDescriptor
        private var context: OpaquePointer?
        private let zck: OpaquePointer
        /// Bytes of the header.
        package let headerSize: Int64
        /// Bytes of the whole file.
        package let size: Int64
        /// Hex SHA-256 of the data section (the bundle's digest when published by mappack).
        package let dataDigest: String

        /// One chunk of the data section: absolute offset in the file, compressed length, what
        /// libzck knows of it (1 valid, 0 missing, -1 failed its digest), and its bytes uncompressed.
        package struct Chunk: Sendable, Equatable {
            package let start: Int64
            package let length: Int64
            package let state: Int32
            package let uncompressed: Int64
        }

        /// Writes `header` to a new file at `path` and reads it with libzck.
        package init(path: String, header: Data) throws(ZchunkError) {
            self.path = path
            let opened: FileDescriptor
            do {
                opened = try unsafe FileDescriptor.open(path, .readWrite, options: [.create, .truncate])
            } catch {
                throw .io(FileError(.create, path, code: error.code))
            }
            file = opened
            let written = unsafe header.withUnsafeBytes { bytes in
                Result { () throws(Errno) in try unsafe opened.writeAll(toAbsoluteOffset: 0, bytes) }
            }
            if case .failure(let error) = written {
                try? file.close()
                throw .io(FileError(.write, path, code: error.code))
            }
            guard let zck = unsafe zck_create() else {
                try? file.close()
                throw .library(what: "create", path: path, message: "out of memory")
            }
            unsafe self.zck = zck
            unsafe context = zck
            guard unsafe zck_init_adv_read(zck, file.rawValue), unsafe zck_read_lead(zck), unsafe zck_read_header(zck) else {
                let error = unsafe Zchunk.failure("read the header", path, zck)
                unsafe zck_free(&context)
                try? file.close()
                throw error
            }
            let header = unsafe zck_get_header_length(zck)
            let data = unsafe zck_get_data_length(zck)
            guard header > 0, data >= 0, let digest = unsafe zck_get_data_digest(zck) else {
                let error = unsafe Zchunk.failure("read the header", path, zck)
                unsafe zck_free(&context)
                try? file.close()
                throw error
            }
            dataDigest = unsafe String(cString: digest)
            unsafe free(digest)
            headerSize = Int64(header)
            size = Int64(header) + Int64(data)
        }

        deinit {
            unsafe zck_free(&context)
            try? file.close()
        }

        /// The chunks of the data section, in file order (the empty dictionary chunk left out).
        package func chunks() -> [Chunk] {
            var out: [Chunk] = []
            var chunk = unsafe zck_get_first_chunk(zck)
            while let current = unsafe chunk {
                let start = unsafe zck_get_chunk_start(current)
                let length = unsafe zck_get_chunk_comp_size(current)
                if length > 0 {
                    unsafe out.append(
                        Chunk(
                            start: Int64(start), length: Int64(length), state: zck_get_chunk_valid(current),
                            uncompressed: Int64(zck_get_chunk_size(current))))
                }
                unsafe chunk = zck_get_next_chunk(current)
            }
            return out
        }

        /// Copies into place every chunk whose digest `seed` has (its frame, of the same length).
        /// libzck checks them with `checkChunks`, as it checks chunks fetched by range.
        package func copyChunks(from seed: SeedChunks) throws(ZchunkError) {
            let source: FileDescriptor
            do { source = try unsafe FileDescriptor.open(seed.path, .readOnly) } catch { throw .io(FileError(.open, seed.path, code: error.code)) }
            defer { try? source.close() }
            var chunk = unsafe zck_get_first_chunk(zck)
            while let current = unsafe chunk {
                unsafe chunk = zck_get_next_chunk(current)
                let length = unsafe zck_get_chunk_comp_size(current)
                guard length > 0, let text = unsafe zck_get_chunk_digest(current) else { continue }
                let digest = unsafe ChunkDigest(hex: String(cString: text))
                unsafe free(text)
                guard let digest, let frame = seed.frames[digest], frame.length == length else { continue }
                let bytes: [UInt8]
                do { bytes = try source.readAll(fromAbsoluteOffset: frame.offset, count: frame.length) } catch {
                    throw .io(FileError(.read, seed.path, code: error.code))
                }
                do { try unsafe bytes.withUnsafeBytes { try unsafe file.writeAll(toAbsoluteOffset: Int64(zck_get_chunk_start(current)), $0) } } catch
                {
                    throw .io(FileError(.write, path, code: (error as? Errno)?.code ?? EIO))
                }
            }
        }

        /// Writes `bytes` at absolute `offset` (a range fetched from the server).
        package func write(_ bytes: RawSpan, at offset: Int64) throws(ZchunkError) {
            do { try file.writeAll(toAbsoluteOffset: offset, bytes) } catch { throw .io(FileError(.write, path, code: error.code)) }
        }

        /// Checks every chunk present against its digest: valid ones are marked so, failed ones
        /// become missing again (to be fetched again). Returns the chunks still missing.
        package func checkChunks() throws(ZchunkError) -> [Chunk] {
            if unsafe zck_find_valid_chunks(zck) == 0 { throw unsafe Zchunk.failure("check chunks", path, zck) }
            unsafe zck_reset_failed_chunks(zck)
            return chunks().filter { $0.state != 1 }
        }

        /// True when every chunk and the whole data section match the header's digests.
        package func isComplete() -> Bool { unsafe zck_validate_checksums(zck) == 1 }
    }
}
