/// A download task the store knows of without keeping it alive (a task holds its store).
struct WeakDownloadTask {
    weak var task: DownloadTask?
}
