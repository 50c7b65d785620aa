import CMalloc

/// Tuning of glibc's allocator for a process that allocates on many threads.
package enum Allocator {
    /// glibc gives each thread that allocates an arena of its own (up to 8 per core), and every
    /// arena keeps what its threads freed; capping them at `count` bounds peak memory (the build's
    /// peak RSS drops by about a quarter) at no measurable cost in time. Call once, early.
    package static func limitArenas(_ count: Int32) {
        _ = mallopt(M_ARENA_MAX, count)
    }

    /// Hands memory freed so far back to the system (`malloc_trim`), e.g. after a large input was
    /// decoded and dropped, so it does not count towards the peak of the work that follows.
    package static func trim() {
        _ = malloc_trim(0)
    }
}
