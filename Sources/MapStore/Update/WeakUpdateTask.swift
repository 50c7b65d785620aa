/// The live update as the store knows it, without keeping it alive: the task holds its store, so a
/// strong reference back would keep a paused update and its store alive after the app let go of both.
struct WeakUpdateTask {
    weak var task: UpdateTask?
}
