/// The version stamped into manifests.
package enum MappackVersion {
    package static let current = "0.1.0"
}
