/// Lower-case hex encoding.
package enum Hex {
    /// Hex of `bytes`.
    package static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            var at = 0
            for byte in bytes {
                out[at] = digit(byte >> 4)
                out[at + 1] = digit(byte & 15)
                at += 2
            }
            return at
        }
    }

    private static func digit(_ value: UInt8) -> UInt8 { value < 10 ? 48 + value : 87 + value }
    /// Bytes of a hex string, nil when malformed.
    package static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c { case 48...57: c - 48; case 97...102: c - 87; case 65...70: c - 55; default: nil }
        }
        var out = [UInt8]()
        out.reserveCapacity(chars.count / 2)
        var i = 0
        while i < chars.count {
            guard let hi = value(chars[i]), let lo = value(chars[i + 1]) else { return nil }
            out.append(hi << 4 | lo); i += 2
        }
        return out
    }
}
