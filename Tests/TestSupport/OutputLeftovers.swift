import Foundation

/// What an interrupted run left in `folder`, once the trash it handed to a detached remover
/// (`.trash-<pid>`, deleted after the run exits) is gone.
///
/// The remover is not this process's child, so nothing can wait for it; the listing is taken again
/// until no trash is left or `deadline` passes, and what is there then is returned, trash included,
/// so a remover that never finishes fails the caller's check instead of hanging it.
public func leftoversOnceTrashIsGone(in folder: String, deadline seconds: Double = 300) -> [String] {
    let end = Date().addingTimeInterval(seconds)
    while true {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        if !entries.contains(where: { $0.hasPrefix(".trash-") }) || Date() > end { return entries.sorted() }
        usleep(20_000)
    }
}
