import Foundation
import MapIO
import TestSupport
import Testing

/// The tar header checksum: the sum of the header's bytes with the checksum field as spaces, as
/// unsigned bytes (POSIX) or as signed ones (some old writers); a name with bytes over 0x7f (any
/// non-ASCII UTF-8) is where the two differ.
@Suite struct TarChecksumTests {
    enum Stored { case unsigned, signed, wrong }

    /// A `.tar.zst` of one file named `é.txt` holding `hello`, its checksum written as `stored`.
    func archive(_ stored: Stored, in folder: TemporaryFolder) throws -> String {
        var header = [UInt8](repeating: 0, count: 512)
        func put(_ text: [UInt8], at offset: Int) { header.replaceSubrange(offset..<(offset + text.count), with: text) }
        put(Array("é.txt".utf8), at: 0)
        put(Array("0000644\0".utf8), at: 100)
        put(Array("0000000\0".utf8), at: 108)
        put(Array("0000000\0".utf8), at: 116)
        put(Array("00000000005\0".utf8), at: 124)
        put(Array("00000000000\0".utf8), at: 136)
        put(Array("        ".utf8), at: 148)
        header[156] = UInt8(ascii: "0")
        put(Array("ustar\0".utf8) + Array("00".utf8), at: 257)
        let unsigned = header.reduce(0) { $0 + Int($1) }
        let signed = header.reduce(0) { $0 + Int(Int8(bitPattern: $1)) }
        #expect(unsigned != signed, "the name must have bytes over 0x7f")
        let sum = stored == .unsigned ? unsigned : stored == .signed ? signed : unsigned + 1
        put(Array(String(format: "%06o", sum).utf8) + [0, UInt8(ascii: " ")], at: 148)
        var tar = header + Array("hello".utf8)
        tar += [UInt8](repeating: 0, count: 512 - 5 + 1024)
        let path = folder.join("one.tar.zst")
        try Zstd.compress(Data(tar)).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test(arguments: [Stored.unsigned, .signed])
    func acceptsTheUnsignedAndTheSignedSum(_ stored: Stored) throws {
        let folder = TemporaryFolder("tar-checksum")
        let reader = try ArchiveReader(path: try archive(stored, in: folder))
        let entry = try #require(try reader.next())
        #expect(entry.name == "é.txt")
        #expect(entry.size == 5)
        #expect(try reader.next() == nil)
    }

    @Test func refusesAnyOtherSum() throws {
        let folder = TemporaryFolder("tar-checksum-wrong")
        let reader = try ArchiveReader(path: try archive(.wrong, in: folder))
        #expect(throws: ArchiveError.self) { try reader.next() }
    }
}
