import CCurl
import Foundation
import MapIO
import Synchronization

/// One libcurl easy handle (`curl_easy_init`) streaming a response body to a closure.
@safe package final class CurlTransfer {
    private let handle: UnsafeMutableRawPointer
    private var sink: (RawSpan) -> Bool = { _ in true }
    private var stop: () -> Bool = { false }
    /// Asked once, before the first body byte, with the status and headers (`get`).
    private var head: ((Int, [String: String]) -> Bool)?
    private var headSeen = false
    /// The last response's headers, names lowercased (filled by `get`).
    private var responseHeaders: [String: String] = [:]

    /// Result of a transfer.
    package struct Outcome {
        /// HTTP status, 0 for `file://`.
        package let status: Int
        /// libcurl's message when the transfer itself failed.
        package let error: String?
        /// True when the sink asked to stop.
        package let aborted: Bool
        /// The final response's headers, names lowercased (`get` only).
        package var headers: [String: String] = [:]
        /// True when `stop` asked to stop (the caller's work was cancelled).
        package var stopped = false
    }

    static let globalInit: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    /// A fresh handle.
    package init() {
        _ = CurlTransfer.globalInit
        unsafe handle = curl_easy_init()!
    }

    deinit { unsafe curl_easy_cleanup(handle) }

    /// PUTs the file at `path` (`size` bytes) to `url` with extra `headers` (`CURLOPT_UPLOAD`).
    package func put(_ url: URL, file path: String, size: Int64, headers: [String] = [], timeoutSeconds: Int = 120) -> Outcome {
        guard let file = try? unsafe FileDescriptor.open(path, .readOnly, options: .followLinks) else {
            return Outcome(status: 0, error: "cannot open \(path)", aborted: false)
        }
        defer { try? file.close() }
        unsafe curl_easy_reset(handle)
        unsafe mp_curl_setopt_str(handle, CURLOPT_URL, url.absoluteString)
        unsafe mp_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        unsafe mp_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT, 10)
        unsafe mp_curl_setopt_long(handle, CURLOPT_TIMEOUT, timeoutSeconds)
        var list: UnsafeMutablePointer<curl_slist>?
        for line in headers { unsafe list = curl_slist_append(list, line) }
        defer { unsafe curl_slist_free_all(list) }
        if unsafe list != nil { unsafe mp_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, list) }
        unsafe mp_curl_upload_fd(handle, file.rawValue, curl_off_t(size))
        self.sink = { _ in true }
        unsafe mp_curl_setopt_datacb(handle, CURLOPT_WRITEFUNCTION) { _, size, count, _ in size * count }
        let (code, status, message) = perform()
        return Outcome(status: status, error: code == CURLE_OK ? nil : (message.isEmpty ? "curl error \(code.rawValue)" : message), aborted: false)
    }

    /// Performs the transfer set up on `handle`, this transfer being the write callback's context,
    /// with libcurl's error text captured: its result code, the HTTP status and the error text (""
    /// when libcurl gave none).
    private func perform() -> (code: CURLcode, status: Int, message: String) {
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        unsafe mp_curl_setopt_ptr(handle, CURLOPT_WRITEDATA, Unmanaged.passUnretained(self).toOpaque())
        let code = unsafe errorBuffer.withUnsafeMutableBufferPointer { errors -> CURLcode in
            unsafe mp_curl_setopt_ptr(handle, CURLOPT_ERRORBUFFER, errors.baseAddress)
            defer { unsafe mp_curl_setopt_ptr(handle, CURLOPT_ERRORBUFFER, nil) }
            return unsafe curl_easy_perform(handle)
        }
        var status = 0
        unsafe mp_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return unsafe (code, status, errorBuffer.withUnsafeBufferPointer { unsafe String(cString: $0.baseAddress!) })
    }

    /// GETs `url` from byte `offset`, handing each body chunk to `sink` (return false to abort). With
    /// `acceptEncoding`, every encoding libcurl decodes is offered (`CURLOPT_ACCEPT_ENCODING` "") and the
    /// sink sees decoded bytes, so a size cap in the sink caps the decoded size. With `range`, only
    /// those bytes are asked for (`CURLOPT_RANGE`); `head`, when given, sees the status and headers
    /// before the first body byte and stops the transfer by returning false (a `200` for a range).
    package func get(
        _ url: URL, from offset: Int64 = 0, range: ClosedRange<Int64>? = nil, lowSpeedSeconds: Int = 30, headers: [String] = [],
        acceptEncoding: Bool = false, stop: (() -> Bool)? = nil, head: ((Int, [String: String]) -> Bool)? = nil,
        sink: @escaping (RawSpan) -> Bool
    ) -> Outcome {
        self.sink = sink
        self.stop = stop ?? { false }
        self.head = head
        headSeen = false
        responseHeaders = [:]
        unsafe curl_easy_reset(handle)
        unsafe mp_curl_setopt_str(handle, CURLOPT_URL, url.absoluteString)
        var list: UnsafeMutablePointer<curl_slist>?
        for line in headers { unsafe list = curl_slist_append(list, line) }
        defer { unsafe curl_slist_free_all(list) }
        if unsafe list != nil { unsafe mp_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, list) }
        // The same protocols as bundle transfers: a URL or a redirect never reaches dict://, ftp://,
        // smb:// or (by redirect) a local file.
        unsafe mp_curl_setopt_str(handle, CURLOPT_PROTOCOLS_STR, "http,https,file")
        unsafe mp_curl_setopt_str(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        unsafe mp_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 1)
        unsafe mp_curl_setopt_long(handle, CURLOPT_MAXREDIRS, 10)
        unsafe mp_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        unsafe mp_curl_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1)
        unsafe mp_curl_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, lowSpeedSeconds)
        unsafe mp_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT, 30)
        if let range {
            unsafe mp_curl_setopt_str(handle, CURLOPT_RANGE, "\(range.lowerBound)-\(range.upperBound)")
        } else if offset > 0 {
            unsafe mp_curl_setopt_off(handle, CURLOPT_RESUME_FROM_LARGE, curl_off_t(offset))
        }
        if acceptEncoding { unsafe mp_curl_setopt_str(handle, CURLOPT_ACCEPT_ENCODING, "") }
        // With `stop`, libcurl asks it through its progress callback about once a second, also while the
        // server sends nothing, and the body callback asks before each chunk: a cancelled caller never
        // waits for a slow or silent server.
        if stop != nil {
            unsafe mp_curl_setopt_long(handle, CURLOPT_NOPROGRESS, 0)
            unsafe mp_curl_setopt_ptr(handle, CURLOPT_XFERINFODATA, Unmanaged.passUnretained(self).toOpaque())
            unsafe mp_curl_setopt_xferinfocb(handle) { context, _, _, _, _ in
                unsafe Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue().stop() ? 1 : 0
            }
        }
        unsafe mp_curl_setopt_ptr(handle, CURLOPT_HEADERDATA, Unmanaged.passUnretained(self).toOpaque())
        unsafe mp_curl_setopt_datacb(handle, CURLOPT_HEADERFUNCTION) { data, size, count, context in
            let transfer = unsafe Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
            let line = unsafe UnsafeRawBufferPointer(start: data, count: size * count)
            if unsafe line.starts(with: "HTTP/".utf8) {
                transfer.responseHeaders = [:]  // a new response (after a redirect)
            } else if let colon = unsafe line.firstIndex(of: UInt8(ascii: ":")) {
                let name = unsafe String(decoding: UnsafeRawBufferPointer(rebasing: line[..<colon]), as: UTF8.self).lowercased()
                transfer.responseHeaders[name] = unsafe CurlMulti.trimmed(UnsafeRawBufferPointer(rebasing: line[(colon + 1)...]))
            }
            return size * count
        }
        unsafe mp_curl_setopt_datacb(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
            let transfer = unsafe Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
            if transfer.stop() { return 0 }
            if !transfer.headSeen, let head = transfer.head {
                transfer.headSeen = true
                var status = 0
                unsafe mp_curl_getinfo_long(transfer.handle, CURLINFO_RESPONSE_CODE, &status)
                if !head(status, transfer.responseHeaders) { return 0 }
            }
            let bytes = unsafe UnsafeRawBufferPointer(start: data, count: size * count)
            return unsafe transfer.sink(bytes.bytes) ? size * count : 0
        }
        let (code, status, message) = perform()
        let stopped = (code == CURLE_ABORTED_BY_CALLBACK || code == CURLE_WRITE_ERROR) && self.stop()
        return Outcome(
            status: status, error: message.isEmpty ? nil : message, aborted: code == CURLE_WRITE_ERROR && !stopped, headers: responseHeaders,
            stopped: stopped)
    }
}

// MARK: - Multi interface

/// A libcurl multi handle (`curl_multi_init`) driven by its own thread, running many transfers at once over
/// shared, reused connections (HTTP/2 multiplexing when the server offers it).
///
/// Transfers are handed over through a lock and `curl_multi_wakeup`; receivers and completions run on the
/// transfer thread, so the Swift cooperative pool never blocks on the network or on file writes.
@safe package final class CurlMulti: @unchecked Sendable {
    // Touched only by the transfer thread, except `curl_multi_wakeup`, which libcurl allows from any thread.
    private let multi: UnsafeMutableRawPointer
    private let state = Mutex(State())

    private struct State {
        var pending: [Job] = []
        var shuttingDown = false
    }

    private struct Job: @unchecked Sendable {
        let request: CurlRequest
        let receiver: any CurlReceiver
        let cancel: CancelFlag
        let completion: @Sendable (CurlOutcome) -> Void
    }

    private final class CancelFlag: Sendable {
        let raised = Atomic<Bool>(false)
    }

    /// One running easy handle; lives in the transfer thread's table while libcurl owns the transfer.
    @safe private final class Transfer {
        let easy: UnsafeMutableRawPointer
        let job: Job
        var headers: [String: String] = [:]
        var headDelivered = false
        var stopped = false
        var headerList: UnsafeMutablePointer<curl_slist>?
        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

        init(easy: UnsafeMutableRawPointer, job: Job) {
            unsafe self.easy = easy
            self.job = job
            unsafe errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        }

        deinit {
            unsafe curl_slist_free_all(headerList)
            unsafe errorBuffer.deallocate()
        }

        var status: Int {
            var status = 0
            unsafe mp_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
            return status
        }
    }

    /// Starts the transfer thread; at most `connectionsPerHost` connections to one host.
    package init(connectionsPerHost: Int) {
        _ = CurlTransfer.globalInit
        unsafe multi = curl_multi_init()!
        unsafe mp_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        unsafe mp_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, max(1, connectionsPerHost))
        let thread = Thread { [self] in run() }
        thread.name = "mappack-curl"
        thread.start()
    }

    /// Runs one transfer to its end; cancelling the calling task stops it and returns `.cancelled`.
    package func perform(_ request: CurlRequest, receiver: any CurlReceiver) async -> CurlOutcome {
        let flag = CancelFlag()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<CurlOutcome, Never>) in
                let job = Job(request: request, receiver: receiver, cancel: flag) { continuation.resume(returning: $0) }
                let accepted = state.withLock { state -> Bool in
                    if state.shuttingDown { return false }
                    state.pending.append(job)
                    return true
                }
                if accepted {
                    unsafe curl_multi_wakeup(multi)
                } else {
                    continuation.resume(returning: CurlOutcome(ending: .cancelled, head: CurlResponseHead(status: 0, headers: [:])))
                }
            }
        } onCancel: {
            flag.raised.store(true, ordering: .releasing)
            unsafe curl_multi_wakeup(multi)
        }
    }

    /// Stops the thread after cancelling whatever is still running; the multi handle is freed by the thread.
    package func shutdown() {
        state.withLock { $0.shuttingDown = true }
        unsafe curl_multi_wakeup(multi)
    }

    /// `bytes` without leading and trailing ASCII spaces, tabs and line ends (header values), as text.
    static func trimmed(_ bytes: UnsafeRawBufferPointer) -> String {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
        var start = 0
        var end = bytes.count
        while unsafe start < end && isSpace(bytes[start]) { start += 1 }
        while unsafe end > start && isSpace(bytes[end - 1]) { end -= 1 }
        return unsafe String(decoding: bytes[start..<end], as: UTF8.self)
    }

    private func run() {
        var running: [UnsafeMutableRawPointer: Transfer] = unsafe [:]
        while true {
            let (jobs, stopping) = state.withLock { state in
                defer { state.pending.removeAll() }
                return (state.pending, state.shuttingDown)
            }
            for job in jobs {
                if job.cancel.raised.load(ordering: .acquiring) || stopping {
                    job.completion(CurlOutcome(ending: .cancelled, head: CurlResponseHead(status: 0, headers: [:])))
                } else {
                    let transfer = start(job)
                    unsafe running[transfer.easy] = transfer
                }
            }
            // Not `for unsafe (easy, transfer) in running`: swift-format 6.3 glues `unsafe` to the pattern.
            let cancelled = unsafe running.values.filter { stopping || $0.job.cancel.raised.load(ordering: .acquiring) }
            for transfer in cancelled {
                unsafe running[transfer.easy] = nil
                finish(transfer, ending: .cancelled)
            }
            if unsafe stopping && running.isEmpty { break }

            var stillRunning: Int32 = 0
            unsafe curl_multi_perform(multi, &stillRunning)
            var queued: Int32 = 0
            while let message = unsafe curl_multi_info_read(multi, &queued) {
                guard let easy = unsafe mp_curl_msg_done_handle(message), let transfer = unsafe running.removeValue(forKey: easy) else { continue }
                unsafe finish(transfer, ending: ending(of: transfer, code: mp_curl_msg_result(message)))
            }
            unsafe curl_multi_poll(multi, nil, 0, 1000, nil)
        }
        for index in unsafe idleHandles.indices { unsafe curl_easy_cleanup(idleHandles[index]) }
        unsafe idleHandles.removeAll()
        unsafe curl_multi_cleanup(multi)
    }

    /// Easy handles of finished transfers, reset for the next one (transfer thread only): a handle
    /// costs libcurl a dozen allocations to set up, and a build starts thousands of transfers.
    private var idleHandles: [UnsafeMutableRawPointer] = unsafe []

    private func start(_ job: Job) -> Transfer {
        let easy = unsafe idleHandles.popLast() ?? curl_easy_init()!
        let transfer = unsafe Transfer(easy: easy, job: job)
        let request = job.request
        unsafe mp_curl_setopt_str(easy, CURLOPT_URL, request.url.absoluteString)
        unsafe mp_curl_setopt_str(easy, CURLOPT_PROTOCOLS_STR, "http,https,file")
        unsafe mp_curl_setopt_str(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        unsafe mp_curl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 1)
        unsafe mp_curl_setopt_long(easy, CURLOPT_MAXREDIRS, 10)
        unsafe mp_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        unsafe mp_curl_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        // Wait for a connection that can multiplex (HTTP/2) rather than opening another one.
        unsafe mp_curl_setopt_long(easy, CURLOPT_PIPEWAIT, 1)
        unsafe mp_curl_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, max(1, request.lowSpeedLimit))
        unsafe mp_curl_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, max(1, request.lowSpeedTime))
        unsafe mp_curl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT, max(1, request.connectTimeout))
        unsafe mp_curl_setopt_str(easy, CURLOPT_USERAGENT, "mappack")
        if let certificates = request.trustedCertificates { unsafe mp_curl_setopt_str(easy, CURLOPT_CAINFO, certificates) }
        var headerLines = request.headers
        if let ranges = request.ranges, !ranges.isEmpty {
            unsafe mp_curl_setopt_str(easy, CURLOPT_RANGE, MultiRangeReceiver.rangeSpec(ranges))
        } else if let end = request.rangeEnd {
            unsafe mp_curl_setopt_str(easy, CURLOPT_RANGE, "\(request.rangeStart)-\(end)")
        } else if request.rangeStart > 0 {
            unsafe mp_curl_setopt_str(easy, CURLOPT_RANGE, "\(request.rangeStart)-")
            if let validator = request.ifRange { headerLines.append("If-Range: \(validator)") }
        }
        for line in headerLines { unsafe transfer.headerList = curl_slist_append(transfer.headerList, line) }
        if unsafe transfer.headerList != nil { unsafe mp_curl_setopt_slist(easy, CURLOPT_HTTPHEADER, transfer.headerList) }
        unsafe mp_curl_setopt_ptr(easy, CURLOPT_ERRORBUFFER, transfer.errorBuffer)
        let context = unsafe Unmanaged.passUnretained(transfer).toOpaque()
        unsafe mp_curl_setopt_ptr(easy, CURLOPT_WRITEDATA, context)
        unsafe mp_curl_setopt_datacb(easy, CURLOPT_WRITEFUNCTION) { data, size, count, context in
            let transfer = unsafe Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
            let bytes = unsafe UnsafeRawBufferPointer(start: data, count: size * count)
            if !transfer.headDelivered {
                transfer.headDelivered = true
                let head = CurlResponseHead(status: transfer.status, headers: transfer.headers)
                if !transfer.job.receiver.receive(head: head) {
                    transfer.stopped = true
                    return 0
                }
            }
            if unsafe !transfer.job.receiver.receive(body: bytes.bytes) {
                transfer.stopped = true
                return 0
            }
            return size * count
        }
        unsafe mp_curl_setopt_ptr(easy, CURLOPT_HEADERDATA, context)
        unsafe mp_curl_setopt_datacb(easy, CURLOPT_HEADERFUNCTION) { data, size, count, context in
            let transfer = unsafe Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
            // On bytes: header names are ASCII, and most lines are dropped or kept as they are.
            let line = unsafe UnsafeRawBufferPointer(start: data, count: size * count)
            if unsafe line.starts(with: "HTTP/".utf8) {
                transfer.headers = [:]  // a new response (after a redirect or a 100 Continue)
            } else if let colon = unsafe line.firstIndex(of: UInt8(ascii: ":")) {
                let name = unsafe String(unsafeUninitializedCapacity: colon) { out in
                    for index in 0..<colon { unsafe out[index] = line[index] >= 0x41 && line[index] <= 0x5A ? line[index] | 0x20 : line[index] }
                    return colon
                }
                transfer.headers[name] = unsafe CurlMulti.trimmed(UnsafeRawBufferPointer(rebasing: line[(colon + 1)...]))
            }
            return size * count
        }
        unsafe curl_multi_add_handle(multi, easy)
        return transfer
    }

    private func ending(of transfer: Transfer, code: CURLcode) -> CurlOutcome.Ending {
        if code == CURLE_OK { return .completed }
        if transfer.stopped && code == CURLE_WRITE_ERROR { return .stoppedByReceiver }
        var message = unsafe String(cString: transfer.errorBuffer)
        if message.isEmpty { message = unsafe String(cString: curl_easy_strerror(code)) }
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            return .timedOut(message)
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT, CURLE_FILE_COULDNT_READ_FILE, CURLE_REMOTE_FILE_NOT_FOUND,
            CURLE_LOGIN_DENIED, CURLE_TOO_MANY_REDIRECTS, CURLE_REMOTE_ACCESS_DENIED,
            CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM:
            return .failed(message, permanent: true)
        default:
            return .failed(message, permanent: false)
        }
    }

    private func finish(_ transfer: Transfer, ending: CurlOutcome.Ending) {
        let head = CurlResponseHead(status: transfer.status, headers: transfer.headers)
        unsafe curl_multi_remove_handle(multi, transfer.easy)
        if unsafe idleHandles.count < 64 {
            unsafe curl_easy_reset(transfer.easy)
            unsafe idleHandles.append(transfer.easy)
        } else {
            unsafe curl_easy_cleanup(transfer.easy)
        }
        transfer.job.completion(CurlOutcome(ending: ending, head: head))
    }
}

extension CurlTransfer {
    /// The linked libcurl's version and features (`curl_version`).
    package static var libraryVersion: String { unsafe String(cString: curl_version()) }
}
