import Dispatch
import Foundation
import MapBuild
import MapFormat
import MapIO

/// `mappack serve PATH`: an image folder, packed image or installed store on
/// `http://127.0.0.1:PORT/` (tiles, TileJSON, a style, the regions, a viewer page) until SIGINT or SIGTERM.
enum ServeCommand {
    static func run(_ raw: [String], terminal: Terminal) async throws -> ExitCode {
        let arguments = try Arguments(raw, verb: Verbs.serve)
        let path = try arguments.expect(["path"])[0]
        let port = try arguments.int(Verbs.Serve.port, range: 0...65535) ?? 8080
        let maplibre = try MapLibreAssets.load(explicit: arguments.option(Verbs.Serve.maplibre))
        let image = try ServedImage.open(path, cache: arguments.option(Verbs.Serve.cache))
        defer { image.close() }
        let server = try LoopbackServer(port: UInt16(port), limits: try serveLimits())
        let base = "http://127.0.0.1:\(server.port)"
        let routes = try ServeRoutes(image: image, base: base, maplibre: maplibre)
        // The first SIGINT or SIGTERM ends the wait below; no thread blocks on it meanwhile.
        let (signals, received) = AsyncStream.makeStream(of: Int32.self)
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { received.yield(number) }
            source.resume()
            sources.append(source)
        }
        server.start { routes.respond(to: $0) }
        let url = base + "/"
        if let file = arguments.option(Verbs.Serve.openURLFile) {
            try FileSystem.writeAtomically(Data((url + "\n").utf8), to: file)
        }
        if terminal.json {
            terminal.event(
                ServingEvent(
                    path: path, kind: image.kind.rawValue, url: url, port: Int(server.port), imageID: image.manifest.imageID,
                    tileDatabases: image.tiles.sources.count, maplibre: maplibre?.folder))
        } else {
            terminal.line("serving \(path) at \(url)")
            if maplibre == nil {
                terminal.error("note: MapLibre GL JS not found (run `make venv`, or give --maplibre-js DIR); the page at / says so")
            }
        }
        for await _ in signals { break }
        server.stop()
        for source in sources { source.cancel() }
        return .success
    }

    /// The server's limits, `LoopbackServer.Limits.standard` unless `MAPPACK_SERVE_MAX_CONNECTIONS`
    /// or `MAPPACK_SERVE_HEAD_TIMEOUT` says otherwise (a bad value is a usage error, exit 2).
    static func serveLimits() throws -> LoopbackServer.Limits {
        var limits = LoopbackServer.Limits.standard
        let environment = ProcessInfo.processInfo.environment
        func value(_ name: String, _ range: ClosedRange<Int>) throws -> Int? {
            guard let text = environment[name] else { return nil }
            guard let number = Int(text), range.contains(number) else {
                throw UsageError(message: "\(name)=\(text.visible): give a whole number in \(range.lowerBound)...\(range.upperBound)")
            }
            return number
        }
        if let connections = try value("MAPPACK_SERVE_MAX_CONNECTIONS", 1...65536) { limits.maxConnections = connections }
        if let seconds = try value("MAPPACK_SERVE_HEAD_TIMEOUT", 1...3600) { limits.headTimeout = seconds }
        return limits
    }
}
