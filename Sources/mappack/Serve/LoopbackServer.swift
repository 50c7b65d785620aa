import Foundation
import MapFormat
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
/// and `HEAD` only, request heads bounded by `HTTPRequest.maxHeadBytes`. Slow clients cannot starve
/// the others (issue 41): at most `Limits.maxConnections` are answered at once (more wait in the
/// listen backlog, not for a descriptor), the whole request head must arrive within
/// `Limits.headTimeout` (a byte every few seconds does not extend it), and running out of
/// descriptors (`EMFILE`) backs off instead of spinning. The handler decides what each path
/// means; it runs on the connection's thread.
package final class LoopbackServer: Sendable {
    /// How many connections are answered at once, and how long a request head may take.
    package struct Limits: Sendable {
        /// Connections answered at once; later ones wait in the kernel's listen backlog.
        package var maxConnections: Int
        /// Seconds a connection has to send its whole request head.
        package var headTimeout: Int

        package init(maxConnections: Int, headTimeout: Int) {
            self.maxConnections = max(1, maxConnections)
            self.headTimeout = max(1, headTimeout)
        }

        /// 10 s for a head; half the open-file limit for connections (at most 512), leaving the
        /// other half to the databases and files the answers open.
        package static var standard: Limits {
            var limit = rlimit()
            let files = unsafe getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? Int(clamping: limit.rlim_cur) : 1024
            return Limits(maxConnections: min(512, max(4, (files - 32) / 2)), headTimeout: 10)
        }
    }

    /// The port bound (the kernel's pick when 0 was asked for).
    package let port: UInt16
    private let listener: Int32
    private let stopped = Atomic<Bool>(false)
    private let limits: Limits
    /// One per connection being answered: the accept loop takes one before `accept`.
    private let slots: DispatchSemaphore

    /// Binds `127.0.0.1:port` (0: any free port) and listens.
    package init(port: UInt16, limits: Limits = .standard) throws(LoopbackServerError) {
        self.limits = limits
        slots = DispatchSemaphore(value: limits.maxConnections)
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
    /// that reads one request, answers it with `handle` and closes. At `limits.maxConnections`
    /// the loop waits for one to end before it accepts another.
    package func start(_ handle: @escaping @Sendable (HTTPRequest) -> HTTPResponse) {
        Thread.detachNewThread { [self] in
            // Microseconds to wait after running out of descriptors, doubled up to 1 s while it lasts.
            var backoff: UInt32 = 10_000
            while !stopped.load(ordering: .acquiring) {
                slots.wait()
                let connection = accept(listener, nil, nil)
                if connection < 0 {
                    let code = errno
                    slots.signal()
                    if code == EINTR || code == ECONNABORTED { continue }
                    if code == EMFILE || code == ENFILE || code == ENOBUFS || code == ENOMEM {
                        // The connection stays in the backlog; answers that end free descriptors.
                        usleep(backoff)
                        backoff = min(backoff * 2, 1_000_000)
                        continue
                    }
                    return
                }
                backoff = 10_000
                let headTimeout = limits.headTimeout
                Thread.detachNewThread { [slots] in
                    LoopbackServer.answer(connection, headTimeout: headTimeout, handle)
                    slots.signal()
                }
            }
        }
    }

    /// Stops accepting (the accept thread ends); connections being answered finish on their own.
    package func stop() {
        stopped.store(true, ordering: .releasing)
        shutdown(listener, Int32(SHUT_RDWR))
    }

    /// Reads one request head from `connection`, answers it, closes the connection.
    private static func answer(_ connection: Int32, headTimeout: Int, _ handle: @Sendable (HTTPRequest) -> HTTPResponse) {
        defer { close(connection) }
        var timeout = timeval(tv_sec: headTimeout, tv_usec: 0)
        _ = unsafe setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = unsafe setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var head: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        // One deadline for the whole head: a per-read timeout let a byte every few seconds hold the
        // connection for ever.
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(headTimeout) * 1_000_000_000
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else {
                send(HTTPResponse.text(408, "request head not received within \(headTimeout) s"), headOnly: false, to: connection)
                return
            }
            var waiting = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            let ready = unsafe poll(&waiting, 1, Int32(clamping: (deadline - now + 999_999) / 1_000_000))
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 { return }
            if ready == 0 { continue }
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
                // Bounded in time too (each read waits at most `headTimeout`): a client that drips
                // after an oversized head must not hold the connection.
                let drainDeadline = DispatchTime.now().uptimeNanoseconds + UInt64(headTimeout) * 1_000_000_000
                while drained < 1 << 20 && DispatchTime.now().uptimeNanoseconds < drainDeadline {
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

    /// Seconds an answer may take to be written: a client that reads a byte now and then would
    /// otherwise hold its connection (and a slot) for as long as it likes.
    private static let sendTimeout: UInt64 = 120

    /// Writes the whole response (`MSG_NOSIGNAL`: a client gone is not a SIGPIPE), giving up after `sendTimeout`.
    private static func send(_ response: HTTPResponse, headOnly: Bool, to connection: Int32) {
        let bytes = response.serialized(headOnly: headOnly)
        let deadline = DispatchTime.now().uptimeNanoseconds + sendTimeout * 1_000_000_000
        unsafe bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count && DispatchTime.now().uptimeNanoseconds < deadline {
                let sent = unsafe Glibc.send(connection, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                if sent < 0 && errno == EINTR { continue }
                if sent <= 0 { return }
                offset += sent
            }
        }
    }
}

extension LoopbackServerError: CategorizedError {
    /// The port could not be served (taken, refused): failed work.
    package var failureCategory: FailureCategory { .failedWork }
}
