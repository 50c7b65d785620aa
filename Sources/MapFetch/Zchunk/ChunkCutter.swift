import MapIO

/// Where zchunk chunks end (issue 21): a content-defined cut (a gear rolling hash, as in FastCDC)
/// so an edit moves only the boundaries next to it, with smaller chunks than libzck's own automatic
/// ones (about 32 KiB), which cost a small map bundle most of its bytes for a 2% edit. The cuts go to
/// libzck as `zck_end_chunk`; the file stays plain zchunk.
///
/// A chunk ends where `hash & mask == 0` once it is `minimum` long, or at `maximum`. With
/// normalization `n` (FastCDC's normalized chunking) the mask has `n` bits more than the chunk
/// size's below `normal` and `n` fewer above it, so lengths gather around `normal`: an edit lands
/// in a chunk with a likelihood that grows with its length, and the long tail of plain cutting is
/// what an update pays for (measured in Benchmarks/HISTORY.md, "What was tried").
///
/// Within `fixed` stretches of the input (the SQLite databases a tar holds, `SQLitePages`) the cut
/// is not by content: a chunk ends where the stretch starts, every `chunkSize` bytes from there,
/// and where it ends; the content-defined cut starts afresh after it.
struct ChunkCutter {
    /// No chunk is shorter (except the last).
    let minimum: Int
    /// No chunk is longer.
    let maximum: Int
    /// The length where the stricter mask gives way to the looser one.
    let normal: Int
    /// The mask below `normal`.
    let strictMask: UInt64
    /// The mask from `normal` on.
    let looseMask: UInt64
    /// The length of a chunk inside a `fixed` stretch.
    let step: Int64
    /// Stretches of the input (offsets from its first byte), in order, none overlapping, cut every `step` bytes.
    let fixed: [Range<Int64>]
    private var hash: UInt64 = 0
    private var length = 0
    /// Offset in the input of the next byte `cuts(in:)` is given.
    private var position: Int64 = 0
    /// The first of `fixed` not yet cut to its end.
    private var nextFixed = 0

    /// Chunks cut as `parameters` say (`chunkSize` a power of two, checked by the catalog's reader),
    /// `fixed` stretches every `chunkSize` bytes (empty ones, and any that overlap one before, are left out).
    init(_ parameters: Zchunk.Parameters, fixed: [Range<Int64>] = []) {
        step = Int64(parameters.chunkSize)
        var kept: [Range<Int64>] = []
        for range in fixed where !range.isEmpty && range.lowerBound >= (kept.last?.upperBound ?? 0) { kept.append(range) }
        self.fixed = kept
        minimum = parameters.minChunk
        maximum = parameters.maxChunk
        let bits = max(1, parameters.chunkSize.trailingZeroBitCount)
        if parameters.normalization == 0 {
            // The first publishers' rule: one mask from `minimum` on, the smallest 2^k - 1 reaching
            // `chunkSize - minimum` (for a power of two and a quarter minimum, `chunkSize - 1`).
            normal = minimum
            strictMask = UInt64(max(1, parameters.chunkSize - minimum)).nextPowerOfTwoMinusOne
            looseMask = strictMask
        } else {
            normal = parameters.chunkSize
            strictMask = (UInt64(1) << UInt64(min(62, bits + parameters.normalization))) - 1
            looseMask = (UInt64(1) << UInt64(max(1, bits - parameters.normalization))) - 1
        }
    }

    /// The offsets in `bytes` (the input's next bytes) just after which a chunk ends.
    mutating func cuts(in bytes: UnsafeRawBufferPointer) -> [Int] {
        var out: [Int] = []
        let base = position
        let count = Int64(bytes.count)
        var index: Int64 = 0
        while index < count {
            guard nextFixed < fixed.count else {
                index = unsafe cutByContent(bytes, from: index, to: count, into: &out)
                break
            }
            let stretch = fixed[nextFixed]
            if base + index < stretch.lowerBound {
                // By content up to the stretch, which starts a chunk.
                index = unsafe cutByContent(bytes, from: index, to: min(count, stretch.lowerBound - base), into: &out)
                if base + index == stretch.lowerBound, length > 0 { endChunk(at: index, into: &out) }
                continue
            }
            let next = min(stretch.upperBound, stretch.lowerBound + ((base + index - stretch.lowerBound) / step + 1) * step)
            guard next - base <= count else { break }  // the stretch goes on in the next bytes
            index = next - base
            endChunk(at: index, into: &out)
            if next == stretch.upperBound { nextFixed += 1 }
        }
        position = base + count
        return out
    }

    /// Cuts `bytes[from..<to]` by content; returns `to`.
    private mutating func cutByContent(_ bytes: UnsafeRawBufferPointer, from: Int64, to: Int64, into out: inout [Int]) -> Int64 {
        let table = ChunkCutter.gear
        for index in Int(from)..<Int(to) {
            length += 1
            hash = unsafe (hash << 1) &+ table[Int(bytes[index])]
            if length >= minimum && hash & (length < normal ? strictMask : looseMask) == 0 || length >= maximum {
                endChunk(at: Int64(index + 1), into: &out)
            }
        }
        return to
    }

    private mutating func endChunk(at offset: Int64, into out: inout [Int]) {
        out.append(Int(offset))
        hash = 0
        length = 0
    }

    /// 256 fixed random words (SplitMix64 from a fixed seed): the same cuts on every machine and release.
    static let gear: [UInt64] = {
        var state: UInt64 = 0x6D61_7070_6163_6B21  // "mappack!"
        return (0..<256).map { _ in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }()
}

extension ChunkCutter {
    /// Reads the tar at `path` and cuts it as `parameters` say (its SQLite databases on their pages
    /// when they say so), handing `body` the bytes in order in parts: each part either ends a chunk
    /// or goes on into the next (the file's last part ends the last chunk without a cut). The
    /// publisher's `Zchunk.compress` and a device's `SeedChunks` read through this one loop, so they
    /// cut alike. What `body` throws is passed on; a `ZchunkError` as it is.
    static func forEachPart(
        ofTar path: String, _ parameters: Zchunk.Parameters, _ body: (UnsafeRawBufferPointer, _ endsChunk: Bool) throws -> Void
    ) throws(ZchunkError) {
        var cutter = ChunkCutter(parameters, fixed: parameters.sqlitePages ? try SQLitePages.databases(inTar: path) : [])
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: ReadableFile.chunkSize, alignment: 16)
        defer { unsafe buffer.deallocate() }
        let source: ReadableFile
        do { source = try ReadableFile(path: path) } catch { throw .io(error) }
        while true {
            let count: Int
            do { count = try unsafe source.read(into: buffer) } catch { throw .io(error) }
            if count == 0 { return }
            let bytes = unsafe UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            var from = 0
            do {
                for cut in unsafe cutter.cuts(in: bytes) {
                    try unsafe body(UnsafeRawBufferPointer(rebasing: bytes[from..<cut]), true)
                    from = cut
                }
                if from < count { try unsafe body(UnsafeRawBufferPointer(rebasing: bytes[from..<count]), false) }
            } catch let error as ZchunkError {
                throw error
            } catch {
                throw .library(what: "cut", path: path, message: "\(error)")
            }
        }
    }
}

extension UInt64 {
    /// The smallest `2^k - 1` at least `self - 1`.
    fileprivate var nextPowerOfTwoMinusOne: UInt64 {
        var value: UInt64 = 1
        while value < self { value <<= 1 }
        return value - 1
    }
}
