import Foundation
import MapFormat
import MapIO

/// One catalog of a store as the core works with it: the image's (its rows in `meta`, its copy in
/// `catalog.json`) or an added one (a row of `added_catalogs`, its copy in that row).
struct StoreCatalog: Sendable, Equatable {
    var id: CatalogID
    var isImageCatalog: Bool
    /// Where bundle URLs resolve (the catalog the device's data came from); nil before one is known.
    var url: URL?
    /// The catalog last checked, when it is not `url`.
    var checkedURL: URL?
    /// The map version of its data on the device.
    var mapVersion: MapVersion?
    var supportedUntil: String?
    /// An added catalog's row (nil for the image's).
    var added: AddedCatalogRow?

    /// The catalog a check or an update of it reads when the app names none.
    var toCheck: URL? { checkedURL ?? url }
}
