import Foundation

/// One HTTP/1.1 request head as `LoopbackServer` read it: the method, the target's path (the part
/// before `?`, percent-decoded) and the header fields (names lowercased).
package struct HTTPRequest: Sendable, Equatable {
    package let method: String
    package let path: String
    package let headers: [String: String]

    /// The largest request head read; a longer one is answered 431 and the connection closed.
    package static let maxHeadBytes = 16 * 1024

    /// Parses a request head (the bytes before the empty line); nil when it is not HTTP/1.x.
    package static func parse(head: [UInt8]) -> HTTPRequest? {
        guard let text = String(validating: head, as: UTF8.self) else { return nil }
        let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        let requestLine = lines.first?.split(separator: " ", omittingEmptySubsequences: false) ?? []
        guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/1."), requestLine[1].hasPrefix("/") else { return nil }
        let target = requestLine[1].split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        guard let path = String(target).removingPercentEncoding else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return HTTPRequest(method: String(requestLine[0]), path: path, headers: headers)
    }
}

/// One HTTP/1.1 response: status, header fields and body. `LoopbackServer` adds `Content-Length`
/// and `Connection: close`, and leaves the body out for `HEAD`.
package struct HTTPResponse: Sendable {
    package var status: Int
    package var headers: [(String, String)]
    package var body: Data

    package init(status: Int, headers: [(String, String)] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A plain-text answer (errors, refusals).
    package static func text(_ status: Int, _ message: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Data((message + "\n").utf8))
    }

    /// The reason phrase of the statuses this server sends.
    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        default: "Status"
        }
    }

    /// The bytes sent: status line, headers, empty line, and the body unless `headOnly`.
    package func serialized(headOnly: Bool) -> Data {
        var head = "HTTP/1.1 \(status) \(HTTPResponse.reason(status))\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        // 204 carries no body and, per RFC 9110, no Content-Length.
        if status != 204 { head += "Content-Length: \(body.count)\r\n" }
        head += "Connection: close\r\n\r\n"
        var bytes = Data(head.utf8)
        if !headOnly && status != 204 { bytes.append(body) }
        return bytes
    }
}
