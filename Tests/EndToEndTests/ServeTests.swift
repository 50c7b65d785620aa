import Foundation
import TestSupport
import Testing

/// Issue 30 items 4 and 5: `mappack serve` shows the real-world image (Natural Earth's Switzerland
/// and Liechtenstein, the world overview in the cache seed) as a folder, as a `.tar.zst` and as an
/// installed store, over HTTP on 127.0.0.1 only; curl reads the tiles and documents, and headless
/// Chromium (Selenium, `Tools/realworld/screenshot.py`) draws the page with MapLibre GL JS.
@Suite struct ServeTests {
    /// One build of the alps image, packed too, and one install of it into a device store.
    final class Built: @unchecked Sendable {
        static let shared = Built()
        let folder = TemporaryFolder("serve")
        var image: String { folder.join("Output/alps-2026.12.0") }
        var packed: String { image + ".tar.zst" }
        var storage: String { folder.join("device/maps") }
        var cache: String { folder.join("device/cache") }
        let build: Tool.Result
        let install: Tool.Result

        private init() {
            let world = RealWorldFixture.shared
            do {
                try Data(
                    world.recipe(include: [RealWorldFixture.switzerland, RealWorldFixture.liechtenstein], formats: "[directory, tar.zst]").utf8
                ).write(to: URL(fileURLWithPath: folder.join("alps.yaml")))
                build = try Tool.mappack(["build", folder.join("alps.yaml"), "--out", folder.join("Output"), "--cache", folder.join("downloads")])
                install = try Tool.mappack([
                    "store", "install", "--image", folder.join("Output/alps-2026.12.0.tar.zst"), "--storage", folder.join("device/maps"), "--cache",
                    folder.join("device/cache"),
                ])
            } catch {
                preconditionFailure("serve fixture: \(error)")
            }
        }

        /// `mappack serve` arguments for one form of the image.
        func arguments(_ form: String) -> [String] {
            switch form {
            case "folder": [image]
            case "packed": [packed]
            default: [storage, "--cache", cache]
            }
        }
    }

    /// One answer as curl saw it.
    struct Answer {
        let status: Int
        let headers: [String: String]
        let body: Data
        let curlStatus: Int32
    }

    /// `GET` (or `HEAD`, or another method) of `url` with `/usr/bin/curl`, nothing decoded.
    static func fetch(_ url: String, method: String = "GET", extra: [String] = []) throws -> Answer {
        let scratch = TemporaryFolder("serve-curl")
        let method = method == "HEAD" ? ["--head"] : ["-X", method]
        let result = try Tool.run(
            "/usr/bin/curl",
            ["-s", "--path-as-is", "--max-time", "30", "-D", scratch.join("head"), "-o", scratch.join("body"), "-w", "%{http_code}"] + method + extra
                + [url], timeout: 60)
        var headers: [String: String] = [:]
        let head = (try? String(contentsOfFile: scratch.join("head"), encoding: .utf8)) ?? ""
        for line in head.split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let body = FileManager.default.contents(atPath: scratch.join("body")) ?? Data()
        return Answer(status: Int(result.stdout) ?? 0, headers: headers, body: body, curlStatus: result.status)
    }

    /// The highest-zoom tile of Switzerland's tile database: XYZ address and the stored bytes (hex).
    static func switzerlandTile(in image: String) throws -> (z: Int, x: Int, y: Int, hex: String) {
        let database = image + "/store/regions/\(RealWorldFixture.switzerland)/tiles.db"
        let row = try Tool.run(
            "/usr/bin/sqlite3",
            [
                "-readonly", database,
                "SELECT zoom_level, tile_column, tile_row, hex(tile_data) FROM tiles ORDER BY zoom_level DESC, tile_column, tile_row LIMIT 1",
            ])
        let fields = row.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "|").map(String.init)
        try #require(fields.count == 4, "\(database): \(row.stdout)\(row.stderr)")
        let z = Int(fields[0])!
        return (z, Int(fields[1])!, (1 << z) - 1 - Int(fields[2])!, fields[3])
    }

    static func hex(_ data: Data) -> String { data.map { String(format: "%02X", $0) }.joined() }

    @Test(arguments: ["folder", "packed", "store"])
    func servesTheImagesTilesAndDocumentsOnLoopbackOnly(form: String) throws {
        let built = Built.shared
        #expect(built.build.status == 0, "\(built.build.stderr)")
        #expect(built.install.status == 0, "\(built.install.stderr)")
        let server = try ServeProcess(built.arguments(form))
        let base = server.base
        #expect(base.hasPrefix("http://127.0.0.1:"))
        let event = try #require(try JSONSerialization.jsonObject(with: Data(server.servingLine.utf8)) as? [String: Any])
        #expect(event["event"] as? String == "serving" && event["kind"] as? String == form, "\(server.servingLine)")
        #expect(event["maplibre"] is String, "MapLibre GL JS not found in .venv (make venv): \(server.servingLine)")
        let lines = built.folder.join("serving-\(form).jsonl")
        try Data((server.servingLine + "\n").utf8).write(to: URL(fileURLWithPath: lines))
        let schema = try Tool.run(
            "/usr/bin/python3", [Tool.repositoryRoot + "/Tests/Support/validate_json.py", Tool.repositoryRoot + "/Schemas", lines])
        #expect(schema.status == 0, "\(schema.stdout)\(schema.stderr)")

        // A region's tile: the stored bytes (gzip from tippecanoe) with their type and encoding, at
        // the XYZ address of its TMS row, on both paths.
        let tile = try ServeTests.switzerlandTile(in: built.image)
        for path in ["/\(tile.z)/\(tile.x)/\(tile.y)", "/tiles/\(tile.z)/\(tile.x)/\(tile.y).pbf"] {
            let answer = try ServeTests.fetch(base + path)
            #expect(answer.status == 200, "\(path)")
            #expect(ServeTests.hex(answer.body) == tile.hex, "\(path): not the stored tile")
            #expect(answer.headers["content-type"] == "application/x-protobuf", "\(answer.headers)")
            #expect(answer.headers["content-encoding"] == "gzip", "\(answer.headers)")
        }
        // The world overview's z0 tile comes from the cache seed (the store's: its map cache).
        #expect(try ServeTests.fetch(base + "/0/0/0").status == 200)
        // Where a tile is, the coverage source has its one polygon; where none is, 404 as for the tile.
        let covered = try ServeTests.fetch(base + "/coverage/\(tile.z)/\(tile.x)/\(tile.y).pbf")
        #expect(covered.status == 200 && !covered.body.isEmpty && covered.headers["content-type"] == "application/x-protobuf")
        #expect(try ServeTests.fetch(base + "/coverage/7/0/0.pbf").status == 404)
        // No tile there, an address off the grid, a path that is not served.
        #expect(try ServeTests.fetch(base + "/7/0/0").status == 404)
        #expect(try ServeTests.fetch(base + "/3/8/0").status == 404)
        #expect(try ServeTests.fetch(base + "/store/regions/europe/western-europe/ch/tiles.db").status == 404)
        // `..` is refused, however written.
        for path in ["/../manifest.json", "/tiles/../../manifest.json", "/%2e%2e/manifest.json"] {
            let answer = try ServeTests.fetch(base + path)
            #expect(answer.status == 400, "\(path): \(answer.status)")
        }
        // HEAD has the headers and no body; other methods are refused; a huge request head too.
        let head = try ServeTests.fetch(base + "/tiles/\(tile.z)/\(tile.x)/\(tile.y).pbf", method: "HEAD")
        // (curl --head writes the head where the body would go: nothing may follow it.)
        #expect(head.status == 200 && head.headers["content-length"] == String(tile.hex.count / 2), "\(head.headers)")
        #expect(String(decoding: head.body, as: UTF8.self).hasSuffix("\r\n\r\n"), "HEAD sent a body")
        #expect(try ServeTests.fetch(base + "/", method: "POST").status == 405)
        // The icon a browser asks for on its own: no content, not an error.
        #expect(try ServeTests.fetch(base + "/favicon.ico").status == 204)
        let padding = String(repeating: "a", count: 20_000)
        #expect(try ServeTests.fetch(base + "/", extra: ["-H", "X-Padding: \(padding)"]).status == 431)

        // TileJSON, the style, the regions.
        let tileJSON = try #require(try JSONSerialization.jsonObject(with: try ServeTests.fetch(base + "/tilejson.json").body) as? [String: Any])
        #expect(tileJSON["tilejson"] as? String == "3.0.0")
        #expect((tileJSON["tiles"] as? [String]) == [base + "/tiles/{z}/{x}/{y}.pbf"], "\(tileJSON)")
        #expect(tileJSON["minzoom"] as? Int == 0 && tileJSON["maxzoom"] as? Int == 7, "\(tileJSON)")
        let layers = try #require(tileJSON["vector_layers"] as? [[String: Any]])
        #expect(layers.map { $0["id"] as? String } == ["countries"])
        #expect((layers.first?["fields"] as? [String: Any])?["ISO_A2"] != nil)
        let style = try #require(try JSONSerialization.jsonObject(with: try ServeTests.fetch(base + "/style.json").body) as? [String: Any])
        let styleLayers = try #require(style["layers"] as? [[String: Any]])
        #expect(styleLayers.first?["type"] as? String == "background")
        #expect(styleLayers.contains { $0["type"] as? String == "fill" && $0["source"] as? String == "coverage" })
        #expect(styleLayers.contains { $0["type"] as? String == "fill" && $0["source-layer"] as? String == "countries" })
        #expect(styleLayers.contains { $0["type"] as? String == "line" && $0["source-layer"] as? String == "countries" })
        let regions = try #require(
            try JSONSerialization.jsonObject(with: try ServeTests.fetch(base + "/regions.geojson").body) as? [String: Any])
        let names = (regions["features"] as? [[String: Any]] ?? []).compactMap { ($0["properties"] as? [String: Any])?["name"] as? String }
        #expect(Set(names) == ["Switzerland", "Liechtenstein"], "\(names)")
        let page = try ServeTests.fetch(base + "/")
        #expect(page.headers["content-type"]?.hasPrefix("text/html") == true)
        #expect(String(decoding: page.body, as: UTF8.self).contains("/maplibre-gl.js"))
        let script = try ServeTests.fetch(base + "/maplibre-gl.js")
        #expect(script.status == 200 && String(decoding: script.body.prefix(200), as: UTF8.self).contains("MapLibre GL JS"))

        // Bound to 127.0.0.1 alone: another loopback address finds nothing listening.
        let port = String(base.split(separator: ":").last!)
        let elsewhere = try ServeTests.fetch("http://127.0.0.2:\(port)/")
        #expect(elsewhere.curlStatus == 7, "127.0.0.2:\(port) answered (curl exit \(elsewhere.curlStatus))")

        // A signal stops it at once, exit 0, the packed image's temporary folder gone.
        let pid = server.process.processIdentifier
        #expect(server.stop(signal: form == "store" ? SIGINT : SIGTERM, timeout: 5) == 0, "\(server.standardError)")
        let left = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter { $0.hasPrefix("mappack-serve-\(pid)-") }
        #expect(left.isEmpty, "left behind: \(left)")
    }

    /// TileJSON says where the image's regions are and opens inside one of them, not on the world its seed's
    /// overview covers; the style colours every country the image holds, not six fixed ones (issue 43: an
    /// image of Austria and Slovenia said world bounds and drew Slovenia grey like land it lacks).
    @Test func tileJSONAndStyleFollowTheImagesRegions() throws {
        let folder = TemporaryFolder("serve-regions")
        // A real world of its own: the shared one holds only countries with fixed colours.
        let made = try Tool.run(
            RealWorldFixture.python,
            [Tool.repositoryRoot + "/Tools/realworld/make_real_world.py", "--out", folder.join("source"), "--countries", "AT,SI"], timeout: 300)
        try #require(made.status == 0, "\(made.stderr)")
        let published = try Tool.mappack(["publish", folder.join("source"), "--out", folder.join("catalog")])
        try #require(published.status == 0, "\(published.stderr)")
        let slovenia = "europe/southern-europe/si"
        try Data(
            RealWorldFixture.shared.recipe(
                name: "east", catalog: folder.join("catalog/catalog.json"), include: [RealWorldFixture.austria, slovenia], formats: "[directory]"
            ).utf8
        ).write(to: URL(fileURLWithPath: folder.join("east.yaml")))
        let build = try Tool.mappack(["build", folder.join("east.yaml"), "--out", folder.join("Output"), "--cache", folder.join("downloads")])
        try #require(build.status == 0, "\(build.stderr)")
        let image = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder.join("Output")).first {
                (try? FileManager.default.attributesOfItem(atPath: folder.join("Output/\($0)")))?[.type] as? FileAttributeType == .typeDirectory
            })
        let manifest = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder.join("Output/\(image)/manifest.json"))))
                as? [String: Any])
        let boxes = (manifest["regions"] as? [[String: Any]] ?? []).compactMap { $0["bbox"] as? [Double] }
        try #require(!boxes.isEmpty)
        let (west, south) = (boxes.map { $0[0] }.min()!, boxes.map { $0[1] }.min()!)
        let (east, north) = (boxes.map { $0[2] }.max()!, boxes.map { $0[3] }.max()!)

        let server = try ServeProcess([folder.join("Output/\(image)")])
        defer { _ = server.stop(signal: SIGTERM, timeout: 5) }
        let tileJSON = try #require(
            try JSONSerialization.jsonObject(with: try ServeTests.fetch(server.base + "/tilejson.json").body) as? [String: Any])
        let bounds = try #require(tileJSON["bounds"] as? [Double])
        let tolerance = 1e-6
        #expect(
            bounds.count == 4 && bounds[0] >= west - tolerance && bounds[1] >= south - tolerance && bounds[2] <= east + tolerance
                && bounds[3] <= north + tolerance, "bounds \(bounds) beyond the regions' \([west, south, east, north])")
        let center = try #require(tileJSON["center"] as? [Double])
        #expect(center.count == 3)
        #expect(
            boxes.contains { center[0] >= $0[0] && center[0] <= $0[2] && center[1] >= $0[1] && center[1] <= $0[3] },
            "centre \(center) is in none of the regions")
        #expect(center[2] >= 5, "opens at zoom \(center[2]): the whole world, not the regions")

        let style = try #require(
            try JSONSerialization.jsonObject(with: try ServeTests.fetch(server.base + "/style.json").body) as? [String: Any])
        let fill = try #require(
            (style["layers"] as? [[String: Any]])?.first { $0["type"] as? String == "fill" && $0["source-layer"] as? String == "countries" })
        let match = try #require((fill["paint"] as? [String: Any])?["fill-color"] as? [Any])
        let pairs = Dictionary(
            stride(from: 2, to: match.count - 1, by: 2).compactMap { index -> (String, String)? in
                guard let code = match[index] as? String, let colour = match[index + 1] as? String else { return nil }
                return (code, colour)
            }, uniquingKeysWith: { first, _ in first })
        let land = match.last as? String
        #expect(pairs["AT"] != nil && pairs["AT"] != land, "\(pairs)")
        #expect(pairs["SI"] != nil && pairs["SI"] != land && pairs["SI"] != pairs["AT"], "Slovenia is drawn like land it lacks: \(pairs)")
    }

    @Test(arguments: ["folder", "packed", "store"])
    func chromiumDrawsTheServedMapWithTheStylesColours(form: String) throws {
        let built = Built.shared
        #expect(built.build.status == 0, "\(built.build.stderr)")
        #expect(built.install.status == 0, "\(built.install.stderr)")
        let server = try ServeProcess(built.arguments(form))
        defer { server.stop() }
        // Kept where a person can look: .build/serve-alps-FORM.png.
        let png = Tool.repositoryRoot + "/.build/serve-alps-\(form).png"
        try? FileManager.default.removeItem(atPath: png)
        let run = try Tool.run(
            RealWorldFixture.python,
            [
                Tool.repositoryRoot + "/Tools/realworld/screenshot.py", server.base + "/", "--png", png, "--expect", "8.2,46.8=CH",
                "--expect", "9.535,47.12=LI", "--expect", "9.0,45.65=water", "--expect", "6.5,47.9=water", "--timeout", "120",
            ], timeout: 300)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)\n\(server.standardError)")
        #expect(run.stdout.contains("screenshot: PASS"), "\(run.stdout)")
        #expect(FileManager.default.fileExists(atPath: png))
    }

    /// Issue 43: where the image has no tile the map says so, in a colour of its own, not in the water's. At
    /// zoom 6.3 over Switzerland the picture asks for z6 tiles: (33,22), which the image holds, spans
    /// 5.625..11.25 E, so its part without a country is water; west of it (32,22) the image holds nothing.
    /// Before, both were the background's water blue, and an area not installed looked like sea.
    @Test(arguments: ["folder", "store"])
    func chromiumDrawsAreasWithoutTilesApartFromWaterAndLand(form: String) throws {
        let built = Built.shared
        #expect(built.build.status == 0, "\(built.build.stderr)")
        #expect(built.install.status == 0, "\(built.install.stderr)")
        let server = try ServeProcess(built.arguments(form))
        defer { server.stop() }
        let png = Tool.repositoryRoot + "/.build/serve-alps-not-installed-\(form).png"
        try? FileManager.default.removeItem(atPath: png)
        let run = try Tool.run(
            RealWorldFixture.python,
            [
                Tool.repositoryRoot + "/Tools/realworld/screenshot.py", server.base + "/", "--png", png, "--view", "8.2,46.8,6.3", "--expect",
                "8.2,46.8=CH", "--expect", "9.0,45.65=water", "--expect", "5.0,46.8=not-installed", "--expect", "5.0,45.5=not-installed", "--expect",
                "11.6,47.2=not-installed",
                "--timeout", "120",
            ], timeout: 300)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)\n\(server.standardError)")
        #expect(run.stdout.contains("screenshot: PASS"), "\(run.stdout)")
    }

    /// Issue 41 item 14: a `tiles.db` of an installed store replaced by a link to a database outside
    /// the storage folder is not followed; its tiles are not served (404).
    @Test func aTileDatabaseLinkedOutOfTheStoreIsNotServed() throws {
        let built = Built.shared
        try #require(built.build.status == 0, "\(built.build.stderr)")
        let folder = TemporaryFolder("serve-link")
        let storage = folder.join("maps")
        let cache = folder.join("cache")
        let install = try Tool.mappack(["store", "install", "--image", built.packed, "--storage", storage, "--cache", cache])
        try #require(install.status == 0, "\(install.stderr)")
        let tile = try ServeTests.switzerlandTile(in: built.image)
        let inside = storage + "/store/regions/\(RealWorldFixture.switzerland)/tiles.db"
        let outside = folder.join("outside.mbtiles")
        try FileManager.default.moveItem(atPath: inside, toPath: outside)
        try FileManager.default.createSymbolicLink(atPath: inside, withDestinationPath: outside)
        let server = try ServeProcess([storage])
        defer { server.stop() }
        for path in ["/\(tile.z)/\(tile.x)/\(tile.y)", "/tiles/\(tile.z)/\(tile.x)/\(tile.y).pbf"] {
            let answer = try ServeTests.fetch(server.base + path)
            #expect(answer.status == 404, "\(path): \(answer.status)")
            #expect(ServeTests.hex(answer.body) != tile.hex, "\(path): served the tile of the database outside the store")
        }
    }

    /// A store's kept manifest replaced by a link is not read through it: serve refuses to start, exit 2.
    @Test func aStoreManifestLinkedOutOfTheStoreIsRefused() throws {
        let built = Built.shared
        try #require(built.build.status == 0, "\(built.build.stderr)")
        let folder = TemporaryFolder("serve-manifest-link")
        let storage = folder.join("maps")
        let install = try Tool.mappack(["store", "install", "--image", built.packed, "--storage", storage, "--cache", folder.join("cache")])
        try #require(install.status == 0, "\(install.stderr)")
        let outside = folder.join("outside.json")
        try FileManager.default.moveItem(atPath: storage + "/manifest.json", toPath: outside)
        try FileManager.default.createSymbolicLink(atPath: storage + "/manifest.json", withDestinationPath: outside)
        let result = try Tool.mappack(["serve", storage, "--port", "0"], timeout: 60)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("manifest.json"), "\(result.stderr)")
    }

    /// Issue 41 item 15: slow clients (a byte every 0.3 s, a head that never ends) more than the
    /// open-file limit allows: the server holds at most its cap of connections, drops each one whose
    /// head has not come within the head timeout, and answers an ordinary request among them. Before,
    /// the accept loop spun on EMFILE while the slow clients held every descriptor. `oversized`: each
    /// slow head starts over the 16 KiB bound, so the server answers 431 and drains what follows;
    /// the drain is bounded in time too (before, a drip kept it reading up to 1 MiB).
    @Test(arguments: [false, true]) func slowClientsBeyondTheFileLimitDoNotStarveAnOrdinaryRequest(oversized: Bool) throws {
        let built = Built.shared
        try #require(built.build.status == 0, "\(built.build.stderr)")
        let server = try ServeProcess(
            [built.image], environment: ["MAPPACK_SERVE_MAX_CONNECTIONS": "16", "MAPPACK_SERVE_HEAD_TIMEOUT": "1"], fileLimit: 48)
        defer { server.stop() }
        let port = String(server.base.split(separator: ":").last!)
        let run = try Tool.run(
            "/usr/bin/python3",
            [
                Tool.repositoryRoot + "/Tests/Support/slowloris.py", "--port", port, "--connections", "60", "--interval", "0.3",
                "--duration", "20", "--deadline", "15",
            ] + (oversized ? ["--oversized"] : []), timeout: 60)
        try #require(run.status == 0 && !run.timedOut, "\(run.stdout)\(run.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)")
        #expect(summary["opened"] as? Int == 60, "\(summary)")
        #expect(summary["normalStatus"] as? Int == 200, "an ordinary request starved: \(summary)\n\(server.standardError)")
        // Every slow client was dropped by the server, long before the 20 s they would have dripped.
        #expect(summary["closedByServer"] as? Int == 60, "\(summary)")
    }

    @Test func aPathThatIsNoImageIsBadInput() throws {
        let folder = TemporaryFolder("serve-bad")
        let missing = try Tool.mappack(["serve", folder.join("nothing"), "--port", "0"], timeout: 60)
        #expect(missing.status == 2 && missing.stderr.contains("not a mappack image"), "\(missing.stderr)")
        let plain = try Tool.mappack(["serve", folder.path, "--port", "0"], timeout: 60)
        #expect(plain.status == 2, "\(plain.stderr)")
        let noMapLibre = try Tool.mappack(["serve", folder.path, "--maplibre-js", folder.path], timeout: 60)
        #expect(noMapLibre.status == 2 && noMapLibre.stderr.contains("maplibre-gl.js"), "\(noMapLibre.stderr)")
    }
}
