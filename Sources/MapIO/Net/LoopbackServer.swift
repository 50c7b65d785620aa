import Foundation
import Synchronization

/// A failure to set up the listening socket, with the address and `errno`.
package struct LoopbackServerError: Error, Sendable, CustomStringConvertible {
    /// The system call that failed (`socket`, `bind`, `listen`).
    package let operation: String
    package let port: UInt16
    package let code: Int32

    package var description: String {
        let hint =
            code == EADDRINUSE
            ? "; the port is taken: pick another --port, or --port 0 for any free one" : "; check the port and the loopback interface"
        return unsafe "cannot listen on 127.0.0.1:\(port): \(operation): \(String(cString: strerror(code))) (errno \(code))\(hint)"
    }
}

/// A small HTTP/1.1 server on 127.0.0.1 only, over POSIX sockets (`socket`, `bind`, `listen`,
/// `accept`): one thread per connection, one request per connection (`Connection: close`), `GET`
/// and `HEAD` only, request heads bounded by `HTTPRequest.maxHeadBytes`, a slow client dropped
/// after `readTimeout`. The handler decides what each path means; it runs on the connection's thread.
package final class LoopbackServer: Sendable {
    /// The port bound (the kernel's pick when 0 was asked for).
    package let port: UInt16
    private let listener: Int32
    private let stopped = Atomic<Bool>(false)
    /// Seconds a connection may take to send its request head.
    private static let readTimeout = 10

    /// Binds `127.0.0.1:port` (0: any free port) and listens.
    package init(port: UInt16) throws(LoopbackServerError) {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socketFD >= 0 else { throw LoopbackServerError(operation: "socket", port: port, code: errno) }
        var reuse: Int32 = 1
        _ = unsafe setsockopt(socketFD, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian  // INADDR_LOOPBACK: never another interface
        let bound = unsafe withUnsafePointer(to: &address) {
            unsafe $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { unsafe bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            let code = errno
            close(socketFD)
            throw LoopbackServerError(operation: "bind", port: port, code: code)
        }
        guard listen(socketFD, 128) == 0 else {
            let code = errno
            close(socketFD)
            throw LoopbackServerError(operation: "listen", port: port, code: code)
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = unsafe withUnsafeMutablePointer(to: &actual) {
            unsafe $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { unsafe getsockname(socketFD, $0, &length) }
        }
        self.listener = socketFD
        self.port = UInt16(bigEndian: actual.sin_port)
    }

    deinit { close(listener) }

    /// Accepts connections until `stop()`, on a thread of its own; each connection gets a thread
    /// that reads one request, answers it with `handle` and closes.
    package func start(_ handle: @escaping @Sendable (HTTPRequest) -> HTTPResponse) {
        Thread.detachNewThread { [self] in
            while !stopped.load(ordering: .acquiring) {
                let connection = accept(listener, nil, nil)
                if connection < 0 {
                    if errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE { continue }
                    return
                }
                Thread.detachNewThread { LoopbackServer.answer(connection, handle) }
            }
        }
    }

    /// Stops accepting (the accept thread ends); connections being answered finish on their own.
    package func stop() {
        stopped.store(true, ordering: .releasing)
        shutdown(listener, Int32(SHUT_RDWR))
    }

    /// Reads one request head from `connection`, answers it, closes the connection.
    private static func answer(_ connection: Int32, _ handle: @Sendable (HTTPRequest) -> HTTPResponse) {
        defer { close(connection) }
        var timeout = timeval(tv_sec: readTimeout, tv_usec: 0)
        _ = unsafe setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = unsafe setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var head: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        while true {
            let count = unsafe chunk.withUnsafeMutableBytes { unsafe recv(connection, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return }
            head += chunk[0..<count]
            let found = head.firstRange(of: end)
            if let found, found.lowerBound <= HTTPRequest.maxHeadBytes {
                head.removeSubrange(found.lowerBound...)
                break
            }
            if head.count > HTTPRequest.maxHeadBytes {
                send(HTTPResponse.text(431, "request head over \(HTTPRequest.maxHeadBytes) bytes"), headOnly: false, to: connection)
                // Closing with unread bytes would reset the connection before the client reads the
                // answer: read (a bounded amount of) what it still sends first.
                shutdown(connection, Int32(SHUT_WR))
                var drained = 0
                while drained < 1 << 20 {
                    let count = unsafe chunk.withUnsafeMutableBytes { unsafe recv(connection, $0.baseAddress, $0.count, 0) }
                    if count <= 0 { break }
                    drained += count
                }
                return
            }
        }
        guard let request = HTTPRequest.parse(head: head) else {
            send(HTTPResponse.text(400, "not an HTTP/1.1 request"), headOnly: false, to: connection)
            return
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            var refused = HTTPResponse.text(405, "\(request.method): only GET and HEAD are served")
            refused.headers.append(("Allow", "GET, HEAD"))
            send(refused, headOnly: false, to: connection)
            return
        }
        send(handle(request), headOnly: request.method == "HEAD", to: connection)
    }

    /// Writes the whole response (`MSG_NOSIGNAL`: a client gone is not a SIGPIPE).
    private static func send(_ response: HTTPResponse, headOnly: Bool, to connection: Int32) {
        let bytes = response.serialized(headOnly: headOnly)
        unsafe bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let sent = unsafe Glibc.send(connection, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                if sent < 0 && errno == EINTR { continue }
                if sent <= 0 { return }
                offset += sent
            }
        }
    }
}
