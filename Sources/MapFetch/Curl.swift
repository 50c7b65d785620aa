import CCurl
import Foundation

/// One libcurl easy handle (`curl_easy_init`) streaming a response body to a closure.
package final class CurlTransfer {
    private let handle: UnsafeMutableRawPointer
    private var sink: (UnsafeRawBufferPointer) -> Bool = { _ in true }

    /// Result of a transfer.
    package struct Outcome {
        /// HTTP status, 0 for `file://`.
        package let status: Int
        /// libcurl's message when the transfer itself failed.
        package let error: String?
        /// True when the sink asked to stop.
        package let aborted: Bool
    }

    private static let globalInit: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    /// A fresh handle.
    package init() {
        _ = CurlTransfer.globalInit
        handle = curl_easy_init()!
    }

    deinit { curl_easy_cleanup(handle) }

    /// GETs `url` from byte `offset`, handing each body chunk to `sink` (return false to abort).
    package func get(_ url: URL, from offset: Int64 = 0, lowSpeedSeconds: Int = 30,
                     sink: @escaping (UnsafeRawBufferPointer) -> Bool) -> Outcome {
        self.sink = sink
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        curl_easy_reset(handle)
        mp_curl_setopt_str(handle, CURLOPT_URL, url.absoluteString)
        mp_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 1)
        mp_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        mp_curl_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1)
        mp_curl_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, lowSpeedSeconds)
        mp_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT, 30)
        if offset > 0 { mp_curl_setopt_off(handle, CURLOPT_RESUME_FROM_LARGE, curl_off_t(offset)) }
        let aborted = errorBuffer.withUnsafeMutableBufferPointer { errors -> Bool in
            mp_curl_setopt_ptr(handle, CURLOPT_ERRORBUFFER, errors.baseAddress)
            mp_curl_setopt_ptr(handle, CURLOPT_WRITEDATA, Unmanaged.passUnretained(self).toOpaque())
            mp_curl_setopt_datacb(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
                let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
                let bytes = UnsafeRawBufferPointer(start: data, count: size * count)
                return transfer.sink(bytes) ? size * count : 0
            }
            let code = curl_easy_perform(handle)
            mp_curl_setopt_ptr(handle, CURLOPT_ERRORBUFFER, nil)
            return code == CURLE_WRITE_ERROR
        }
        var status = 0
        mp_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        let message = errorBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return Outcome(status: status, error: message.isEmpty ? nil : message, aborted: aborted)
    }
}
