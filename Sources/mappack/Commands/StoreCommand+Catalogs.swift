import Foundation
import MapBuild
import MapFormat
import MapIO
import MapStore

/// `mappack store catalogs [add URL | remove ID]`: the store's catalogs (the image's first), and
/// `--catalog URL|ID`, which names one of them by URL or by id.
extension StoreCommand {
    /// `store catalogs`, `store catalogs add URL`, `store catalogs remove ID`.
    static func catalogs(_ context: Context) async throws -> ExitCode {
        let words = context.arguments.positionals
        switch words.first {
        case nil:
            let store = try await context.open()
            printCatalogs(try store.catalogs(), to: context.terminal)
        case "add":
            guard words.count == 2 else { throw UsageError(message: "mappack store catalogs add needs the catalog's URL (or path)") }
            let url = try Arguments.catalogURL(words[1])
            let store = try await context.open()
            let added = try await waitFor { try await store.addCatalog(url: url) }
            if !context.terminal.json {
                context.terminal.line(
                    "added catalog \(added.id) (map version \(added.mapVersion?.rawValue ?? "?")): "
                        + "list its regions with `mappack store available --catalog \(added.id)`")
            }
            printCatalogs(try store.catalogs(), to: context.terminal, table: false)
        case "remove":
            guard words.count == 2 else { throw UsageError(message: "mappack store catalogs remove needs a catalog id (see mappack store catalogs)") }
            let store = try await context.open()
            try await waitFor { try await store.removeCatalog(CatalogID(words[1])) }
            if !context.terminal.json { context.terminal.line("removed catalog \(words[1])") }
            printCatalogs(try store.catalogs(), to: context.terminal, table: false)
        default:
            throw UsageError(message: "mappack store catalogs takes no argument (the list), add URL or remove ID")
        }
        return .success
    }

    /// The catalogs as records (`--json`), else as a table (`table`).
    private static func printCatalogs(_ catalogs: [CatalogInfo], to terminal: Terminal, table: Bool = true) {
        if terminal.json {
            for catalog in catalogs {
                terminal.record(
                    StoreCatalogRecord(
                        id: catalog.id.rawValue, imageCatalog: catalog.isImageCatalog, url: catalog.url?.absoluteString,
                        mapVersion: catalog.mapVersion?.rawValue, installedRegions: catalog.installedRegions.count,
                        updateState: catalog.updateStatus?.rawValue ?? "none"))
            }
            return
        }
        guard table else { return }
        var text = TextTable([("CATALOG", .left), ("VERSION", .left), ("REGIONS", .right), ("UPDATE", .left), ("URL", .left)])
        for catalog in catalogs {
            text.add([
                catalog.id.rawValue + (catalog.isImageCatalog ? " (image)" : ""), catalog.mapVersion?.rawValue ?? "?",
                String(catalog.installedRegions.count), catalog.updateStatus.map { StoreMessages.words(for: $0) } ?? "-",
                catalog.url.map { $0.shown } ?? "-",
            ])
        }
        terminal.line(text.text)
    }

    /// What `--catalog VALUE` names: one of the store's catalogs by id when VALUE is one, else a catalog URL
    /// (or path). Nil without the option.
    static func catalogOption(_ context: Context, store: MapStore) throws -> (url: URL?, id: CatalogID?)? {
        guard let value = context.arguments.option(Verbs.Store.catalog) else { return nil }
        if ((try? store.catalogs()) ?? []).contains(where: { $0.id.rawValue == value }) { return (nil, CatalogID(value)) }
        return (try Arguments.catalogURL(value), nil)
    }
}
