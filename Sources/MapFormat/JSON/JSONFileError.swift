import Foundation

/// A JSON file that did not decode: which file, where, what.
public struct JSONFileError: Error, Sendable, CustomStringConvertible {
    /// The file's path or URL.
    public let file: String
    /// A dotted path to the offending value (`regions[3].parent`), when known.
    public let codingPath: String
    /// What was wrong.
    public let reason: String
    /// 1-based line and column of a syntax error, when the parser gives them.
    public var line: Int?
    public var column: Int?

    /// Builds the error directly.
    public init(file: String, codingPath: String, reason: String) {
        self.file = file
        self.codingPath = codingPath
        self.reason = reason
    }

    /// Finds where a syntax error is: Foundation's decoder does not say, its JSONSerialization
    /// reports "around character N", which becomes a line and column here.
    private static func syntaxLocation(_ data: Data) -> (line: Int, column: Int, message: String)? {
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            return nil
        } catch {
            let message = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "invalid JSON"
            guard let range = message.range(of: "character "),
                let offset = Int(message[range.upperBound...].prefix { $0.isNumber })
            else { return (0, 0, message) }
            var line = 1
            var column = 1
            for byte in data.prefix(offset) {
                if byte == 0x0A {
                    line += 1
                    column = 1
                } else if byte & 0xC0 != 0x80 {
                    column += 1
                }
            }
            return (line, column, message)
        }
    }

    init(file: String, error: DecodingError, data: Data) {
        self.file = file
        func render(_ path: [any CodingKey]) -> String {
            var out = ""
            for key in path {
                if let index = key.intValue { out += "[\(index)]" } else { out += out.isEmpty ? key.stringValue : "." + key.stringValue }
            }
            return out
        }
        switch error {
        case .typeMismatch(let type, let context):
            codingPath = render(context.codingPath)
            reason = "expected \(type): \(context.debugDescription)"
        case .valueNotFound(let type, let context):
            codingPath = render(context.codingPath)
            reason = "missing value of type \(type)"
        case .keyNotFound(let key, let context):
            codingPath = render(context.codingPath)
            reason = "missing required field \"\(key.stringValue)\""
        case .dataCorrupted(let context):
            codingPath = render(context.codingPath)
            if context.codingPath.isEmpty, let location = JSONFileError.syntaxLocation(data) {
                reason = "not valid JSON: " + location.message
                if location.line > 0 {
                    line = location.line
                    column = location.column
                }
            } else {
                reason = context.debugDescription
            }
        @unknown default:
            codingPath = ""
            reason = "\(error)"
        }
    }

    public var description: String {
        let place = line.map { "\(file):\($0):\(column ?? 0):" } ?? "\(file):"
        let at = codingPath.isEmpty ? "" : " at \(codingPath):"
        return "\(place)\(at) \(reason); fix the file or regenerate it"
    }
}
