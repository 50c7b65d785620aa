import Foundation
import Synchronization
import Testing

@testable import MapBuild

/// `BlockingWork.mapWaiting`, the synchronous map an import writes its `tiles.db` files with: results
/// in input order from several threads, and of several failures always the first by position, so
/// the same inputs give the same error whichever thread met one first.
@Suite struct BlockingWorkTests {
    struct Refused: Error, Equatable { let item: Int }

    @Test func resultsKeepTheInputOrderAcrossThreads() throws {
        // Item 0 ends only after item 1 has ended, which another thread must have run.
        let oneDone = DispatchSemaphore(value: 0)
        let items = Array(0..<400)
        let squares = try BlockingWork.mapWaiting(items, width: 3) { item in
            if item == 0 { #expect(oneDone.wait(timeout: .now() + 300) == .success, "item 1 did not run beside item 0") }
            if item == 1 { oneDone.signal() }
            return item * item
        }
        #expect(squares == items.map { $0 * $0 })
    }

    @Test(arguments: [1, 2, 4]) func theFirstFailureByPositionWins(width: Int) {
        // With more than one thread, item 10 fails only once item 60 has failed on another thread:
        // item 60's failure comes first in time, and item 10's error is still the one thrown.
        let ran = Mutex(Set<Int>())
        let sixtyFailed = DispatchSemaphore(value: 0)
        #expect(throws: Refused(item: 10)) {
            _ = try BlockingWork.mapWaiting(Array(0..<200), width: width) { item in
                ran.withLock { _ = $0.insert(item) }
                if item == 60 {
                    sixtyFailed.signal()
                    throw Refused(item: 60)
                }
                if item == 10 {
                    if width > 1 { #expect(sixtyFailed.wait(timeout: .now() + 300) == .success, "item 60 never ran") }
                    throw Refused(item: 10)
                }
                return item
            }
        }
        // On one thread nothing after the failing item starts. (With more, how far the others got before
        // the failure was seen depends on the scheduler: they stop at their next item.)
        if width == 1 { #expect(ran.withLock { $0 } == Set(0...10)) }
    }
}
