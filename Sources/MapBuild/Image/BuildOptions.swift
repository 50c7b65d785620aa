import MapFetch

/// Settings of one build run.
package struct BuildOptions: Sendable {
    /// Folder that receives `<name>-<mapVersion>/` (default `./Output`).
    package var outputRoot: String
    package var cache: DownloadCache
    package var jobs: Int
    /// Seconds since 1970 stamped as build time (`SOURCE_DATE_EPOCH`); the catalog's release time when nil.
    package var sourceDateEpoch: Int?
    /// Private key (file path, text) that signs the manifest, when given.
    package var signingKey: (path: String, text: String)?
    /// An earlier image whose unpacked files may be reused for unchanged bundles (`--from`).
    package var fromImage: String?
    /// A shared remote bundle cache consulted before the origin (`--remote-cache`).
    package var remoteCache: RemoteCache?
    /// Rebuild even when the outputs are up to date (`--force`).
    package var force = false
    /// Make the outputs durable before they are renamed into place (`--sync`): one `syncfs` (or
    /// fsyncs) of the staged outputs, then of the output folder after the renames. Off by
    /// default: a CI runner reads its outputs before any power cut could matter, and the build stamp
    /// remembers the boot, so outputs of a build that did not sync are read back in full after a
    /// reboot before they are called up to date, and built again if anything differs (issue 43).
    package var sync = false
    /// Where a stop request and the publishing of the outputs meet (SIGINT/SIGTERM in the CLI).
    package var gate = PublishGate()
    /// Use no network: bundles come from the download cache or `file://` URLs, any other fails the build.
    package var offline = false

    package init(outputRoot: String, cache: DownloadCache, jobs: Int, sourceDateEpoch: Int?, signingKey: (path: String, text: String)? = nil) {
        self.outputRoot = outputRoot
        self.cache = cache
        self.jobs = jobs
        self.sourceDateEpoch = sourceDateEpoch
        self.signingKey = signingKey
    }
}
