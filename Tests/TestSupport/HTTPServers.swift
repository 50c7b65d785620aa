import Foundation

/// Why a test server did not come up.
public struct TestServerError: Error, CustomStringConvertible {
    /// What went wrong, with the server's own log when there is one.
    public let description: String
}

/// Counters the fault server keeps per path.
public struct ServedPath: Sendable, Equatable {
    /// Requests for the path.
    public let requests: Int
    /// Body bytes written for the path.
    public let bytes: Int
}

/// nginx on a free 127.0.0.1 port serving `root`, with its config, logs and temp files in its own temp
/// folder; stopped when released. Its access log records `$body_bytes_sent` so tests can count bytes.
public final class NginxServer: @unchecked Sendable {
    /// The served folder.
    public let root: String
    /// The port it listens on.
    public let port: Int
    /// `http://127.0.0.1:<port>/`, or `https://…` with TLS.
    public var baseURL: URL { URL(string: "\(certificate == nil ? "http" : "https")://127.0.0.1:\(port)/")! }
    /// With TLS, the self-signed certificate (PEM) a client must trust; nil for plain HTTP.
    public let certificate: String?
    private let folder: TemporaryFolder
    private let process: ChildProcess

    /// Starts nginx serving `root`; returns once the port answers. With `tls`, it serves HTTPS and offers
    /// HTTP/2 (ALPN) with a fresh self-signed certificate for 127.0.0.1. `limitRate` (nginx's
    /// `limit_rate`, e.g. `4k`) slows every response to that many bytes a second, so a transfer can be
    /// caught midway.
    public init(root: String, tls: Bool = false, webdav: Bool = false, limitRate: String? = nil) throws {
        self.root = root
        let folder = TemporaryFolder("nginx")
        self.folder = folder
        certificate = tls ? try Self.makeCertificate(in: folder) : nil
        var lastError = "nginx did not start"
        for _ in 0..<5 {
            let port = try LoopbackPort.free()
            let conf = folder.join("nginx.conf")
            try Self.config(port: port, root: root, prefix: folder.path, tls: tls, webdav: webdav, limitRate: limitRate).write(
                toFile: conf, atomically: true, encoding: .utf8)
            // Runs until stopped; `stop` bounds its end.
            let process = ChildProcess("/usr/sbin/nginx", ["-c", conf, "-p", folder.path + "/", "-e", folder.join("error.log")], timeout: nil)
            process.process.standardOutput = FileHandle.nullDevice
            process.process.standardError = FileHandle.nullDevice
            try process.start()
            if LoopbackPort.waitUntilAnswering(port, while: { process.isRunning }) {
                self.port = port
                self.process = process
                return
            }
            process.stop()
            lastError = (try? String(contentsOfFile: folder.join("error.log"), encoding: .utf8)) ?? lastError
        }
        throw TestServerError(description: "nginx did not start: \(lastError)")
    }

    deinit { stop() }

    /// Stops nginx (SIGTERM, fast shutdown) and waits for it (SIGKILL after 3 s).
    public func stop() { process.stop() }

    /// Body bytes nginx sent for every path starting with `prefix`, summed over its access log.
    public func bytesSent(prefix: String) -> Int {
        let log = (try? String(contentsOfFile: folder.join("access.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").reduce(0) { sum, line in
            let fields = line.split(separator: " ")
            guard fields.count >= 3, fields[0].hasPrefix(prefix) else { return sum }
            return sum + (Int(fields[2]) ?? 0)
        }
    }

    /// Body bytes nginx sent for `path` (no query), summed over its access log.
    public func bytesSent(path: String) -> Int {
        let log = (try? String(contentsOfFile: folder.join("access.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").reduce(0) { sum, line in
            let fields = line.split(separator: " ")
            guard fields.count >= 3, fields[0].split(separator: "?", maxSplits: 1).first.map(String.init) == path else { return sum }
            return sum + (Int(fields[2]) ?? 0)
        }
    }

    /// Every logged request so far: path (with query), status, and the bytes nginx sent for it on the
    /// wire, headers included (`$bytes_sent`).
    public func wireLog() -> [(path: String, status: Int, bytes: Int)] {
        let log = (try? String(contentsOfFile: folder.join("access.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count >= 6, let status = Int(fields[1]), let bytes = Int(fields[5]) else { return nil }
            return (String(fields[0]), status, bytes)
        }
    }

    /// Requests nginx logged for `path` (no query).
    public func requests(path: String) -> Int {
        let log = (try? String(contentsOfFile: folder.join("access.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").filter {
            $0.split(separator: " ").first?.split(separator: "?", maxSplits: 1).first.map(String.init) == path
        }.count
    }

    /// Distinct client connections nginx served requests on.
    public func connectionCount() -> Int {
        let log = (try? String(contentsOfFile: folder.join("access.log"), encoding: .utf8)) ?? ""
        return Set(log.split(separator: "\n").compactMap { $0.split(separator: " ").dropFirst(3).first }).count
    }

    /// Protocols of the requests nginx logged for `path` (no query): `HTTP/1.1`, `HTTP/2.0`.
    public func protocols(path: String) -> [String] {
        let log = (try? String(contentsOfFile: folder.join("access.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count >= 5, fields[0].split(separator: "?", maxSplits: 1).first.map(String.init) == path else { return nil }
            return String(fields[4])
        }
    }

    private static func makeCertificate(in folder: TemporaryFolder) throws -> String {
        let openssl = try Tool.run(
            "/usr/bin/env",
            [
                "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", folder.join("key.pem"), "-out", folder.join("cert.pem"), "-days", "2",
                "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            ], timeout: 120)
        if openssl.timedOut { throw TestServerError(description: "openssl did not make a test certificate within 120 s") }
        guard openssl.status == 0 else { throw TestServerError(description: "openssl could not make a test certificate") }
        return folder.join("cert.pem")
    }

    private static func config(port: Int, root: String, prefix: String, tls: Bool, webdav: Bool, limitRate: String?) -> String {
        // As a remote bundle cache: PUT stores a file (folders made on demand), GET serves it.
        let location =
            webdav
            ? "location / { dav_methods PUT; create_full_put_path on; dav_access user:rw group:r all:r; client_max_body_size 0; }" : "location / { }"
        let listen =
            tls
            ? "listen 127.0.0.1:\(port) ssl http2;\n        ssl_certificate \(prefix)/cert.pem;\n        ssl_certificate_key \(prefix)/key.pem;"
            : "listen 127.0.0.1:\(port);"
        // Workers must be able to read test folders (mode 0700, owned by whoever runs the tests).
        let user = geteuid() == 0 ? "user root;\n" : ""
        return """
            \(user)daemon off;
            worker_processes 1;
            pid \(prefix)/nginx.pid;
            error_log \(prefix)/error.log warn;
            events { worker_connections 256; }
            http {
                log_format bytes '$request_uri $status $body_bytes_sent $connection $server_protocol $bytes_sent';
                access_log \(prefix)/access.log bytes;
                client_body_temp_path \(prefix)/client_body;
                proxy_temp_path \(prefix)/proxy;
                fastcgi_temp_path \(prefix)/fastcgi;
                uwsgi_temp_path \(prefix)/uwsgi;
                scgi_temp_path \(prefix)/scgi;
                default_type application/octet-stream;
                sendfile on;
                keepalive_requests 10000;
                server {
                    \(listen)
                    root \(root);
                    \(limitRate.map { "limit_rate \($0);" } ?? "")
                    \(location)
                }
            }

            """
    }
}

/// The fault-injecting server (`Tests/Support/fault_server.py`) on a free 127.0.0.1 port serving `root`;
/// stopped when released. See the script's header for the fault parameters.
public final class FaultServer: @unchecked Sendable {
    /// The served folder.
    public let root: String
    /// The port it listens on.
    public let port: Int
    private let process: ChildProcess

    /// The script, found beside this source file so tests run from any working directory.
    public static let script: String = {
        let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        return here.deletingLastPathComponent().appendingPathComponent("Support/fault_server.py").path
    }()

    /// Starts the server serving `root`; returns once the port answers.
    public init(root: String) throws {
        self.root = root
        (process, port) = try LoopbackPort.startScript(Self.script, root: root, name: "fault server")
    }

    deinit { stop() }

    /// Stops the server and waits for it (SIGKILL after 3 s).
    public func stop() { process.stop() }

    /// `http://127.0.0.1:<port>/<path>?fault=…&…` with `parameters` in a stable order.
    public func url(_ path: String, fault: String? = nil, _ parameters: [String: String] = [:]) -> URL {
        var components = URLComponents()
        components.scheme = "http"
        components.host = "127.0.0.1"
        components.port = port
        components.path = path.hasPrefix("/") ? path : "/" + path
        var items: [URLQueryItem] = []
        if let fault { items.append(URLQueryItem(name: "fault", value: fault)) }
        items += parameters.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        if !items.isEmpty { components.queryItems = items }
        return components.url!
    }

    /// What the server served per path so far (`GET /__stats`).
    public func stats() throws -> [String: ServedPath] {
        let body = try LoopbackPort.get(port: port, path: "/__stats")
        guard let json = try JSONSerialization.jsonObject(with: body) as? [String: [String: Int]] else {
            throw TestServerError(description: "fault server stats are not a JSON object")
        }
        return json.mapValues { ServedPath(requests: $0["requests"] ?? 0, bytes: $0["bytes"] ?? 0) }
    }

    /// Counters for one path (zeros when never requested).
    public func served(_ path: String) throws -> ServedPath {
        try stats()[path.hasPrefix("/") ? path : "/" + path] ?? ServedPath(requests: 0, bytes: 0)
    }
}

/// Loopback socket helpers for the test servers.
enum LoopbackPort {
    /// Starts a Python test server `script` serving `root` on a free port, waits for its
    /// "PORT <n>" line (at most 60 s: then it is killed, which ends the read) and for the port to
    /// answer; returns the process, which runs until stopped, and the port.
    static func startScript(_ script: String, root: String, name: String) throws -> (ChildProcess, Int) {
        let process = ChildProcess("/usr/bin/env", ["python3", script, "--root", root, "--port", "0"], timeout: nil)
        let output = Pipe()
        process.process.standardOutput = output
        process.process.standardError = FileHandle.nullDevice
        try process.start()
        let deadline = process.killIfRunning(after: 60)
        defer { deadline.cancel() }
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let piece = output.fileHandleForReading.availableData
            if piece.isEmpty { break }
            line.append(piece)
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)), waitUntilAnswering(port, while: { process.isRunning }) else {
            process.stop()
            throw TestServerError(description: "\(name) did not start within 60 s (said '\(text)')")
        }
        return (process, port)
    }

    /// A port the kernel considers free right now.
    static func free() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestServerError(description: "socket: errno \(errno)") }
        defer { close(fd) }
        var address = loopback(port: 0)
        let bound = unsafe withUnsafePointer(to: &address) {
            unsafe $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { unsafe bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw TestServerError(description: "bind: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = unsafe withUnsafeMutablePointer(to: &address) {
            unsafe $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { unsafe getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Polls until `port` accepts a connection (true), `alive` turns false or 10 s pass (false).
    static func waitUntilAnswering(_ port: Int, while alive: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline && alive() {
            if let fd = try? connect(port: port) {
                close(fd)
                return true
            }
            usleep(20_000)
        }
        return false
    }

    /// The body of a plain `GET path` (HTTP/1.0, so the server closes when done).
    static func get(port: Int, path: String) throws -> Data {
        let fd = try connect(port: port)
        defer { close(fd) }
        // A server that stops answering ends the read after 60 s (`recv` fails) instead of hanging the test.
        var limit = timeval(tv_sec: 60, tv_usec: 0)
        _ = unsafe setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        _ = unsafe request.withUnsafeBytes { unsafe send(fd, $0.baseAddress, $0.count, 0) }
        var response = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = unsafe buffer.withUnsafeMutableBytes { unsafe recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            response.append(contentsOf: buffer[0..<n])
        }
        guard let split = response.range(of: Data("\r\n\r\n".utf8)) else {
            throw TestServerError(description: "no HTTP response from 127.0.0.1:\(port)\(path)")
        }
        return response.subdata(in: split.upperBound..<response.endIndex)
    }

    private static func connect(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestServerError(description: "socket: errno \(errno)") }
        var address = loopback(port: port)
        let connected = unsafe withUnsafePointer(to: &address) {
            unsafe $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                unsafe Foundation.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if connected != 0 {
            close(fd)
            throw TestServerError(description: "connect: errno \(errno)")
        }
        return fd
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = unsafe inet_addr("127.0.0.1")
        return address
    }
}
