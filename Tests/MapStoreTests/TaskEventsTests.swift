import Foundation
import MapFormat
import MapStore
import TestSupport
import Testing

/// One event model: every consumer of a `DownloadTask`'s `events`, like every consumer of
/// `MapStore.events()`, gets every event (issue 31).
@Suite struct TaskEventsTests {
    /// The events of `stream` as lines, progress included.
    static func lines(_ stream: AsyncStream<DownloadEvent>) async -> [String] {
        var lines: [String] = []
        for await event in stream {
            switch event {
            case .stateChanged(let id, let state): lines.append("\(id) \(state)")
            case .progress(let id, let received, let total): lines.append("progress \(id) \(received)/\(total)")
            case .completed(let ids): lines.append("completed \(ids.map(\.rawValue).joined(separator: ","))")
            case .failed(let error): lines.append("failed \(error)")
            }
        }
        return lines
    }

    @Test func everyConsumerOfADownloadTaskGetsEveryEvent() async throws {
        _ = try await offPool { StoreFixture.shared }
        let nginx = try NginxServer(root: DownloadTests.catalogFolder)
        defer { nginx.stop() }
        let device = Device()
        let store = try await device.open(catalog: URL(string: "catalog.json", relativeTo: nginx.baseURL)!.absoluteURL)
        let task = try store.download(regions: ["europe/li"])
        async let first = Self.lines(task.events)
        async let second = Self.lines(task.events)
        try await task.wait()
        let (one, two) = await (first, second)
        #expect(one.first == "europe/li downloading" && one.last == "completed europe/li", "\(one)")
        #expect(one == two, "two consumers of one task saw different events")
        // A consumer that starts after the end gets the story too (a run of progress reports as its latest).
        let late = await Self.lines(task.events)
        #expect(late.filter { !$0.hasPrefix("progress") } == one.filter { !$0.hasPrefix("progress") })
        #expect(late.last { $0.hasPrefix("progress") } == one.last { $0.hasPrefix("progress") })
    }
}
