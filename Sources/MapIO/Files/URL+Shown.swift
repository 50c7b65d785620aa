import Foundation

extension URL {
    /// How messages name this URL: a file's path as typed (`/maps/catalog.json`), any other URL whole
    /// (`https://…/catalog.json`). The one spelling of "this URL for a person"; a URL stays a `URL` until
    /// it is shown.
    package var shown: String { isFileURL ? path : absoluteString }
}
