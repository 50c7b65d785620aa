import MapFormat

/// What a `DownloadTask` reports, in order, on its `events` sequence.
public enum DownloadEvent: Sendable {
    /// A requested region changed state (`downloading`, `paused`, `completed`, `available` after a cancel).
    case stateChanged(RegionID, RegionState)
    /// Bytes of a requested region (with its descendants) on the device so far, of `totalBytes` still missing at the start.
    case progress(RegionID, receivedBytes: Int64, totalBytes: Int64)
    /// Every requested region is installed.
    case completed([RegionID])
    /// The download failed; see `MapStoreError.category` for local versus remote. Fetched bytes are kept for a later resume.
    case failed(MapStoreError)
}

extension DownloadEvent {
    /// 0…100 for `progress`, nil for other events.
    public var percentage: Double? {
        guard case .progress(_, let received, let total) = self else { return nil }
        return total > 0 ? min(100, Double(received) * 100 / Double(total)) : 100
    }
}
