import Foundation

/// The signed-catalog attack server (`Tests/Support/catalog_attack_server.py`) on a free 127.0.0.1 port:
/// one catalog URL whose catalog and signature the test swaps between `mappack publish` outputs under
/// `root`, as a hostile mirror or network would; stopped when released.
public final class CatalogAttackServer: @unchecked Sendable {
    /// The folder holding one `mappack publish` output per sub-folder.
    public let root: String
    /// The port it listens on.
    public let port: Int
    private let process: ChildProcess

    /// The script, found beside this source file so tests run from any working directory.
    public static let script: String = {
        let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        return here.deletingLastPathComponent().appendingPathComponent("Support/catalog_attack_server.py").path
    }()

    /// The one catalog URL devices and builds are pointed at.
    public var catalogURL: URL { URL(string: "http://127.0.0.1:\(port)/catalog.json")! }

    /// Starts the server serving publish outputs under `root`; returns once the port answers.
    public init(root: String) throws {
        self.root = root
        (process, port) = try LoopbackPort.startScript(Self.script, root: root, name: "catalog attack server")
    }

    deinit { stop() }

    /// Stops the server and waits for it.
    public func stop() { process.stop() }

    /// From now on `/catalog.json` (and the bundles) come from `root/catalog`, `/catalog.json.sig` from
    /// `root/signature` (default: the catalog's folder; nil strips it), its `nextKey` replaced by
    /// `nextKey` when given; `/catalog.json.timestamp` from `root/timestamp` (nil: 404, as before timestamps);
    /// with `etag` (`long`, `cr`, `plain`), every answer carries that hostile or plain `ETag`, and a
    /// request head over 8 KiB, with a bare CR, or (`plain`) conditional is answered 400.
    public func serve(
        catalog: String, signature: String?? = .none, nextKey: String? = nil, timestamp: String? = nil, etag: String? = nil
    ) throws {
        var components = URLComponents()
        components.path = "/__serve"
        var items = [URLQueryItem(name: "catalog", value: catalog)]
        switch signature {
        case .none: break
        case .some(.none): items.append(URLQueryItem(name: "signature", value: "none"))
        case .some(.some(let folder)): items.append(URLQueryItem(name: "signature", value: folder))
        }
        if let nextKey { items.append(URLQueryItem(name: "next-key", value: nextKey)) }
        if let timestamp { items.append(URLQueryItem(name: "timestamp", value: timestamp)) }
        if let etag { items.append(URLQueryItem(name: "etag", value: etag)) }
        components.queryItems = items
        let query = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B") ?? ""
        _ = try LoopbackPort.get(port: port, path: "/__serve?" + query)
    }

    /// Requests the server answered for `path` so far.
    public func requests(_ path: String) throws -> Int { try count("requests", path) }

    /// Requests for `path` the server answered 400 (a head over 8 KiB, a bare CR, or refused validators).
    public func refused(_ path: String) throws -> Int { try count("refused", path) }

    private func count(_ key: String, _ path: String) throws -> Int {
        let body = try LoopbackPort.get(port: port, path: "/__stats")
        let json = try JSONSerialization.jsonObject(with: body) as? [String: [String: Int]]
        return json?[path]?[key] ?? 0
    }
}
