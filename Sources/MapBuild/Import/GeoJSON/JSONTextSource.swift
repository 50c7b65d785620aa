import MapIO

/// The text of a JSON file as UTF-8, one chunk at a time, in whichever encoding Foundation's
/// `JSONSerialization` would have found: a byte order mark (UTF-8's is dropped), else the pattern
/// of zero bytes in the first four (UTF-16 or UTF-32, either byte order), else UTF-8. RFC 8259
/// asks for UTF-8; the others are decoded here so the files `mappack import` read before still read.
struct JSONTextSource {
    private enum Encoding {
        case utf8
        case utf16(bigEndian: Bool)
        case utf32(bigEndian: Bool)
    }

    /// Bytes read from the file at a time.
    static let chunkSize = 64 << 10

    private let file: ReadableFile
    private var raw: [UInt8]
    private var encoding: Encoding?
    /// Bytes of a code unit cut by the end of the last read.
    private var carry: [UInt8] = []
    /// A high surrogate whose low one is in the next read.
    private var pendingHigh: UInt32?

    init(file: ReadableFile) {
        self.file = file
        raw = [UInt8](repeating: 0, count: JSONTextSource.chunkSize)
    }

    /// Replaces `chunk` with the next UTF-8 bytes of the text (`offset` is where they start, for
    /// errors); empty at the end.
    mutating func next(into chunk: inout [UInt8], at offset: Int) throws(JSONStreamReader.Failure) {
        chunk.removeAll(keepingCapacity: true)
        while chunk.isEmpty {
            var count: Int
            do { count = try file.read(into: &raw) } catch { throw .io(error) }
            var bytes = raw[0..<count]
            if encoding == nil {
                // Four bytes decide, as Foundation's detection reads them.
                while bytes.count < 4, count > 0 {
                    var more = [UInt8](repeating: 0, count: 4 - bytes.count)
                    do { count = try file.read(into: &more) } catch { throw .io(error) }
                    bytes = ArraySlice(Array(bytes) + more[0..<count])
                }
                let (found, bom) = JSONTextSource.detect(Array(bytes.prefix(4)))
                encoding = found
                bytes = bytes.dropFirst(bom)
            }
            if bytes.isEmpty {
                guard carry.isEmpty, pendingHigh == nil else { throw .syntax(offset: offset, reason: "the text ends inside a character") }
                return
            }
            try decode(bytes, into: &chunk, at: offset)
        }
    }

    private static func detect(_ first: [UInt8]) -> (Encoding, bom: Int) {
        if first.count >= 4 {
            if first.starts(with: [0xEF, 0xBB, 0xBF]) { return (.utf8, 3) }
            if first.starts(with: [0x00, 0x00, 0xFE, 0xFF]) { return (.utf32(bigEndian: true), 4) }
            if first.starts(with: [0xFF, 0xFE, 0x00, 0x00]) { return (.utf32(bigEndian: false), 4) }
            if first.starts(with: [0xFF, 0xFE]) { return (.utf16(bigEndian: false), 2) }
            if first.starts(with: [0xFE, 0xFF]) { return (.utf16(bigEndian: true), 2) }
            switch (first[0], first[1], first[2], first[3]) {
            case (0, 0, 0, _): return (.utf32(bigEndian: true), 0)
            case (_, 0, 0, 0): return (.utf32(bigEndian: false), 0)
            case (0, _, 0, _): return (.utf16(bigEndian: true), 0)
            case (_, 0, _, 0): return (.utf16(bigEndian: false), 0)
            default: return (.utf8, 0)
            }
        }
        if first.count >= 2 {
            if first[0] == 0 { return (.utf16(bigEndian: true), 0) }
            if first[1] == 0 { return (.utf16(bigEndian: false), 0) }
        }
        return (.utf8, 0)
    }

    private mutating func decode(_ bytes: ArraySlice<UInt8>, into chunk: inout [UInt8], at offset: Int) throws(JSONStreamReader.Failure) {
        let width: Int
        let bigEndian: Bool
        switch encoding! {
        case .utf8:
            chunk.append(contentsOf: bytes)
            return
        case .utf16(let big): (width, bigEndian) = (2, big)
        case .utf32(let big): (width, bigEndian) = (4, big)
        }
        var units = carry
        units.append(contentsOf: bytes)
        let whole = units.count / width * width
        carry = Array(units[whole...])
        var position = 0
        while position < whole {
            var value: UInt32 = 0
            for byte in 0..<width {
                let next = UInt32(units[position + (bigEndian ? byte : width - 1 - byte)])
                value = value << 8 | next
            }
            position += width
            let scalar: Unicode.Scalar?
            if width == 2, (0xD800...0xDBFF).contains(value) {
                guard pendingHigh == nil else { throw .syntax(offset: offset + chunk.count, reason: "a lone UTF-16 surrogate") }
                pendingHigh = value
                continue
            } else if width == 2, (0xDC00...0xDFFF).contains(value) {
                guard let high = pendingHigh else { throw .syntax(offset: offset + chunk.count, reason: "a lone UTF-16 surrogate") }
                pendingHigh = nil
                scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (value - 0xDC00))
            } else {
                guard pendingHigh == nil else { throw .syntax(offset: offset + chunk.count, reason: "a lone UTF-16 surrogate") }
                scalar = Unicode.Scalar(value)
            }
            guard let scalar else { throw .syntax(offset: offset + chunk.count, reason: "a code unit that is no character") }
            chunk.append(contentsOf: UTF8.encode(scalar)!)
        }
    }
}
