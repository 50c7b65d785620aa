/// Where zchunk chunks end (issue 21): a content-defined cut (a gear rolling hash, as in FastCDC)
/// so an edit moves only the boundaries next to it, with smaller chunks than libzck's own automatic
/// ones (about 32 KiB), which cost a small map bundle most of its bytes for a 2% edit. The cuts go to
/// libzck as `zck_end_chunk`; the file stays plain zchunk.
///
/// A chunk ends where `hash & mask == 0` once it is `minimum` long, or at `maximum`. With
/// normalization `n` (FastCDC's normalized chunking) the mask has `n` bits more than the chunk
/// size's below `normal` and `n` fewer above it, so lengths gather around `normal`: an edit lands
/// in a chunk with a likelihood that grows with its length, and the long tail of plain cutting is
/// what an update pays for (measured in the README, "Delta updates").
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
    private var hash: UInt64 = 0
    private var length = 0

    /// Chunks cut as `parameters` say (`chunkSize` a power of two, checked by the catalog's reader).
    init(_ parameters: Zchunk.Parameters) {
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

    /// The offsets in `bytes` just after which a chunk ends.
    mutating func cuts(in bytes: UnsafeRawBufferPointer) -> [Int] {
        var out: [Int] = []
        let table = ChunkCutter.gear
        for index in 0..<bytes.count {
            length += 1
            hash = (hash << 1) &+ table[Int(bytes[index])]
            if length >= minimum && hash & (length < normal ? strictMask : looseMask) == 0 || length >= maximum {
                out.append(index + 1)
                hash = 0
                length = 0
            }
        }
        return out
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

extension UInt64 {
    /// The smallest `2^k - 1` at least `self - 1`.
    fileprivate var nextPowerOfTwoMinusOne: UInt64 {
        var value: UInt64 = 1
        while value < self { value <<= 1 }
        return value - 1
    }
}
