/// A region download's bytes so far (with its descendants), or an updating region's, as `MapStore.progress(of:)` reports it.
public struct RegionProgress: Sendable, Equatable {
    /// Bytes on the device so far.
    public var receivedBytes: Int64
    /// Bytes that were missing when the download (or update) started.
    public var totalBytes: Int64
    /// 0…1.
    public var fraction: Double { totalBytes > 0 ? min(1, Double(receivedBytes) / Double(totalBytes)) : 1 }
}
