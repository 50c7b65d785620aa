import Synchronization

/// Costly resources (large buffers, C library contexts) kept idle between users, so work that
/// opens and closes something many times a second does not make and free it each time. The pool
/// only holds them; the owner makes and frees them (with the C calls that fit).
final class IdlePool<Resource>: Sendable {
    // @unchecked Sendable: an idle resource is only reached under the lock, and one user at a time holds it.
    private struct Held: @unchecked Sendable { let resource: Resource }
    private let idle = Mutex<[Held]>([])
    /// At most this many idle resources of one kind are kept.
    private let limit: Int

    init(keeping limit: Int) { self.limit = limit }

    /// An idle resource that `fits`, removed from the pool; nil when none is idle.
    func take(where fits: (Resource) -> Bool = { _ in true }) -> Resource? {
        let held = idle.withLock { list -> Held? in
            guard let index = list.lastIndex(where: { fits($0.resource) }) else { return nil }
            return list.remove(at: index)
        }
        return held?.resource
    }

    /// Keeps `resource` for reuse unless `limit` resources of its kind (`sameKind`) are idle
    /// already; false when it was not kept (the caller frees it).
    func keep(_ resource: Resource, sameKind: (Resource) -> Bool = { _ in true }) -> Bool {
        idle.withLock { list -> Bool in
            guard list.count(where: { sameKind($0.resource) }) < limit else { return false }
            list.append(Held(resource: resource))
            return true
        }
    }

    /// Empties the pool, handing every idle resource back to be freed.
    func removeAll() -> [Resource] {
        idle.withLock { list in
            defer { list.removeAll() }
            return list
        }.map(\.resource)
    }
}
