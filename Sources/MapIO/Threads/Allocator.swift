import CMalloc
import Foundation

/// Tuning of glibc's allocator for a process that allocates on many threads. Elsewhere (and with
/// `-DMAPPACK_PORTABLE`) both calls do nothing: other allocators size their pools themselves.
package enum Allocator {
    /// glibc gives each thread that allocates an arena of its own (up to 8 per core), and every
    /// arena keeps what its threads freed. One arena holds a cold build's peak RSS about 6 MiB
    /// lower than two and 20 MiB lower than the default, with no measurable loss of time (the
    /// per-thread caches serve most small allocations without the arena's lock). Call once, early.
    /// `MALLOC_ARENA_MAX` in the environment, when set, wins (glibc reads it itself).
    package static func limitArenas(_ count: Int32) {
        #if os(Linux) && !MAPPACK_PORTABLE
            if let text = unsafe getenv("MALLOC_ARENA_MAX"), unsafe !String(cString: text).isEmpty { return }
            _ = mallopt(M_ARENA_MAX, count)
        #endif
    }

    /// Serves blocks of `threshold` bytes and more from their own mappings and gives freed memory
    /// at the top of the heap back once `threshold` of it is free. glibc's default raises the
    /// mapping threshold each time a large block is freed (up to 32 MiB), after which large blocks
    /// come from the heap and stay counted in RSS after they are freed: a build's catalog and
    /// plan arrays, an install's manifest. Fixed at 128 KiB, a cold build's peak RSS was 5 MiB
    /// lower, at no measured cost in time (the big buffers that come and go per bundle are reused,
    /// `ScratchBuffers`). Call once, early; `MALLOC_MMAP_THRESHOLD_` in the environment wins.
    package static func releaseLargeBlocks(threshold: Int32 = 128 << 10) {
        setThresholds(mapping: threshold, trim: threshold)
    }

    /// glibc's mapping and trim thresholds, unless `MALLOC_MMAP_THRESHOLD_` is set.
    private static func setThresholds(mapping: Int32, trim: Int32) {
        #if os(Linux) && !MAPPACK_PORTABLE
            if let text = unsafe getenv("MALLOC_MMAP_THRESHOLD_"), unsafe !String(cString: text).isEmpty { return }
            _ = mallopt(M_MMAP_THRESHOLD, mapping)
            _ = mallopt(M_TRIM_THRESHOLD, trim)
        #endif
    }

    /// Hands memory freed so far back to the system (`malloc_trim`), e.g. after a large input was
    /// decoded and dropped, so it does not count towards the peak of the work that follows.
    package static func trim() {
        #if os(Linux) && !MAPPACK_PORTABLE
            _ = malloc_trim(0)
        #endif
    }
}
