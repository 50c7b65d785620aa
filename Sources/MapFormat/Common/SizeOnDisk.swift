import Foundation

/// Space files take on a device's filesystem.
public enum SizeOnDisk {
    /// Bytes a regular file of `size` bytes allocates with `blockSize` blocks: its size rounded up
    /// to whole blocks; an empty file takes no block (ext4 without inline data).
    public static func allocated(size: Int64, blockSize: Int64) -> Int64 {
        guard size > 0 else { return 0 }
        return (size + blockSize - 1) / blockSize * blockSize
    }
}

/// Binary-unit rendering of byte counts for people (`1.5 GiB`).
public enum ByteCount {
    /// The units `format` steps through (one array, not one per call: plans format thousands).
    private static let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]

    /// `bytes` in the largest binary unit that keeps the number ≥ 1.
    public static func format(_ bytes: Int64) -> String {
        let units = ByteCount.units
        var value = Double(bytes)
        var unit = 0
        while abs(value) >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        if unit == 0 { return "\(bytes) B" }
        // Three significant digits, without String(format:) (slow on Linux for thousands of rows).
        let decimals = abs(value) >= 100 ? 0 : abs(value) >= 10 ? 1 : 2
        let scale = decimals == 0 ? 1.0 : decimals == 1 ? 10.0 : 100.0
        let scaled = Int64((abs(value) * scale).rounded())
        let whole = scaled / Int64(scale)
        let fraction = scaled % Int64(scale)
        let sign = value < 0 ? "-" : ""
        if decimals == 0 { return "\(sign)\(whole) \(units[unit])" }
        let digits = String(fraction)
        return "\(sign)\(whole).\(String(repeating: "0", count: decimals - digits.count) + digits) \(units[unit])"
    }

    /// Parses `64 MiB`, `32GiB`, `1000`, `10 MB`; nil when not a size.
    public static func parse(_ text: String) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let digits = trimmed.prefix { $0.isNumber || $0 == "." }
        guard !digits.isEmpty, let number = Double(digits) else { return nil }
        let unit = trimmed.dropFirst(digits.count).trimmingCharacters(in: .whitespaces).lowercased()
        let factors: [String: Double] = [
            "": 1, "b": 1, "kib": 0x1p10, "mib": 0x1p20, "gib": 0x1p30, "tib": 0x1p40,
            "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "k": 0x1p10, "m": 0x1p20, "g": 0x1p30, "t": 0x1p40,
        ]
        guard let factor = factors[unit] else { return nil }
        let value = number * factor
        guard value.isFinite, value >= 0, value < 9e18 else { return nil }
        return Int64(value)
    }
}
