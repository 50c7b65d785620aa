import MapFormat
import Synchronization

/// Observation: one store-wide event stream for any number of consumers, and progress by polling.
extension MapStore {
    /// A new stream of every store event from now on (region states, download progress, downloads and
    /// updates finished or failed, the regions on offer changing). Each call returns a stream of its own;
    /// several consumers each see every event. Stop consuming (or cancel the consuming task) to end it.
    public func events() -> AsyncStream<StoreEvent> { broadcaster.stream() }

    /// The latest progress of a region being downloaded (with its descendants) or of an installed region
    /// being updated, also while paused; nil when none is under way.
    public func progress(of region: RegionID) -> RegionProgress? { runtime.withLock { $0.progress(of: region) } }

    /// Records a region's bytes so far for `progress(of:)` and tells the event consumers.
    func reportProgress(_ region: RegionID, receivedBytes: Int64, totalBytes: Int64) {
        runtime.withLock { $0.record(region, RegionProgress(receivedBytes: receivedBytes, totalBytes: totalBytes)) }
        broadcaster.send(.progress(region, receivedBytes: receivedBytes, totalBytes: totalBytes))
    }

    /// Passes a download task's event on to the store's consumers and the progress table.
    func forward(_ event: DownloadEvent, of task: DownloadTask) {
        switch event {
        case .stateChanged:
            // The write that changed the state announced it to the store's consumers (`MapStore.publish`).
            break
        case .progress(let id, let received, let total):
            reportProgress(id, receivedBytes: received, totalBytes: total)
        case .completed(let ids):
            runtime.withLock { $0.settleProgress(ids) }
            broadcaster.send(.downloadFinished(ids))
        case .failed(let error):
            broadcaster.send(.downloadFailed(task.regions, error))
        }
    }
}
