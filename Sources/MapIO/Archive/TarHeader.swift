import Foundation

/// Field readers for 512-byte tar headers.
enum TarHeader {
    /// The stored checksum equals the sum of the header's bytes with the checksum field as spaces
    /// (as unsigned bytes, or as signed ones, which some old writers used).
    static func checksumMatches(_ header: UnsafeRawBufferPointer) -> Bool {
        guard let stored = unsafe number(header, at: 148, length: 8) else { return false }
        // One pass without a branch per byte (every entry of a bundle is checked): the unsigned sum
        // and the count of bytes over 0x7f, each of which a signed sum counts 256 lower.
        var unsigned = 8 * Int64(UInt8(ascii: " "))
        var high: Int64 = 0
        for range in [0..<148, 156..<512] {
            for index in range {
                let byte = unsafe header[index]
                unsigned += Int64(byte)
                high += Int64(byte >> 7)
            }
        }
        return stored == unsigned || stored == unsigned - 256 * high
    }

    /// An octal field (spaces or NULs around the digits), or a GNU base-256 one (high bit set).
    static func number(_ header: UnsafeRawBufferPointer, at offset: Int, length: Int) -> Int64? {
        let field = unsafe UnsafeRawBufferPointer(rebasing: header[offset..<(offset + length)])
        if unsafe field[0] & 0x80 != 0 {
            // Base-256, big-endian, positive only (0x80 marks it; 0xff would be negative).
            guard unsafe field[0] == 0x80 else { return nil }
            var value: Int64 = 0
            for index in 1..<length {
                guard value <= (Int64.max >> 8) else { return nil }
                value = unsafe value << 8 | Int64(field[index])
            }
            return value
        }
        var value: Int64 = 0
        var index = 0
        while unsafe index < length && (field[index] == UInt8(ascii: " ") || field[index] == 0) { index += 1 }
        if index == length { return 0 }
        while index < length, unsafe field[index] >= UInt8(ascii: "0"), unsafe field[index] <= UInt8(ascii: "7") {
            guard value <= (Int64.max >> 3) else { return nil }
            value = unsafe value << 3 | Int64(field[index] - UInt8(ascii: "0"))
            index += 1
        }
        // Only spaces and NULs may follow the digits.
        while index < length {
            guard unsafe field[index] == UInt8(ascii: " ") || field[index] == 0 else { return nil }
            index += 1
        }
        return value
    }

    /// The name field, with the ustar prefix in front when the header is POSIX ustar.
    static func name(_ header: UnsafeRawBufferPointer) -> [UInt8] {
        func string(_ offset: Int, _ length: Int) -> UnsafeRawBufferPointer {
            let field = unsafe UnsafeRawBufferPointer(rebasing: header[offset..<(offset + length)])
            return unsafe UnsafeRawBufferPointer(rebasing: field[..<(field.firstIndex(of: 0) ?? length)])
        }
        let name = unsafe string(0, 100)
        // "ustar\0" then version "00": POSIX, whose prefix field extends the name (GNU's "ustar  " does not).
        let magic = unsafe UnsafeRawBufferPointer(rebasing: header[257..<263])
        guard unsafe magic.elementsEqual("ustar\0".utf8) else { return unsafe Array(name) }
        let prefix = unsafe string(345, 155)
        guard unsafe !prefix.isEmpty else { return unsafe Array(name) }
        return unsafe Array(prefix) + [UInt8(ascii: "/")] + Array(name)
    }

    /// The kind of entry a type flag stands for.
    static func kind(_ type: UInt8) -> ArchiveEntry.Kind {
        switch type {
        case 0, UInt8(ascii: "0"), UInt8(ascii: "7"): .regular
        case UInt8(ascii: "5"): .directory
        case UInt8(ascii: "1"): .hardlink
        case UInt8(ascii: "2"): .symlink
        case UInt8(ascii: "3"): .other("character device")
        case UInt8(ascii: "4"): .other("block device")
        case UInt8(ascii: "6"): .other("FIFO")
        case 0x21...0x7E: .other("file of type '\(Character(Unicode.Scalar(type)))'")
        default: .other("file of unknown type")
        }
    }

    /// The attributes of a pax extended header that matter here; nil when its records are malformed.
    /// Each record is `<length> <key>=<value>\n`, the length counting the whole record.
    static func paxAttributes(_ records: [UInt8]) -> (path: [UInt8]?, size: Int64?, sparse: Bool)? {
        var path: [UInt8]?
        var size: Int64?
        var sparse = false
        var at = 0
        while at < records.count {
            if records[at] == 0 { break }  // NUL padding after the last record
            var length = 0
            var index = at
            while index < records.count, records[index] >= UInt8(ascii: "0"), records[index] <= UInt8(ascii: "9") {
                length = length * 10 + Int(records[index] - UInt8(ascii: "0"))
                guard length <= records.count else { return nil }
                index += 1
            }
            guard index > at, index < records.count, records[index] == UInt8(ascii: " "),
                length > index - at + 1, at + length <= records.count, records[at + length - 1] == UInt8(ascii: "\n")
            else { return nil }
            let record = records[(index + 1)..<(at + length - 1)]
            guard let equals = record.firstIndex(of: UInt8(ascii: "=")) else { return nil }
            let key = record[..<equals]
            let value = record[(equals + 1)...]
            if key.elementsEqual("path".utf8) {
                path = Array(value)
            } else if key.elementsEqual("size".utf8) {
                guard !value.isEmpty, value.count <= 18, value.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
                size = value.reduce(0) { $0 * 10 + Int64($1 - UInt8(ascii: "0")) }
            } else if key.starts(with: "GNU.sparse.".utf8) {
                sparse = true
            }
            at += length
        }
        return (path, size, sparse)
    }
}
