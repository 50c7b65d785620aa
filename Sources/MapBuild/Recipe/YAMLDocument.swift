import CYAML
import Foundation

/// A YAML value with the line and column it started at (1-based), as libyaml's document loader reports it.
package indirect enum YAMLNode: Sendable {
    case scalar(String, line: Int, column: Int)
    case sequence([YAMLNode], line: Int, column: Int)
    case mapping([(key: String, keyLine: Int, keyColumn: Int, value: YAMLNode)], line: Int, column: Int)

    /// Line where the node starts.
    package var line: Int {
        switch self {
        case .scalar(_, let l, _), .sequence(_, let l, _), .mapping(_, let l, _): l
        }
    }
    /// Column where the node starts.
    package var column: Int {
        switch self {
        case .scalar(_, _, let c), .sequence(_, _, let c), .mapping(_, _, let c): c
        }
    }
}

/// A YAML file that libyaml refused or that nests or aliases too much.
package struct YAMLError: Error, Sendable {
    package let line: Int
    package let column: Int
    package let message: String
}

/// Parses YAML with libyaml (`yaml_parser_load`) into `YAMLNode`s.
package enum YAMLDocument {
    /// Deepest nesting accepted.
    package static let maxDepth = 64
    /// Most nodes visited (aliases count each time), so alias bombs stop early.
    package static let maxNodes = 100_000

    /// Parses `data`; nil for an empty document.
    package static func parse(_ data: Data) throws(YAMLError) -> YAMLNode? {
        var parser = unsafe yaml_parser_t()
        guard unsafe yaml_parser_initialize(&parser) == 1 else { throw YAMLError(line: 0, column: 0, message: "cannot initialise libyaml") }
        defer { unsafe yaml_parser_delete(&parser) }
        var document = unsafe yaml_document_t()
        let bytes = [UInt8](data)
        try checkFlowNesting(bytes)
        let loaded = unsafe bytes.withUnsafeBufferPointer { buffer -> Int32 in
            unsafe yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            return unsafe yaml_parser_load(&parser, &document)
        }
        guard loaded == 1 else {
            let mark = unsafe parser.problem_mark
            let problem = unsafe parser.problem.map { unsafe String(cString: $0) } ?? "malformed YAML"
            let context = unsafe parser.context.map { unsafe String(cString: $0) + ", " } ?? ""
            throw YAMLError(line: Int(mark.line) + 1, column: Int(mark.column) + 1, message: context + problem)
        }
        defer { unsafe yaml_document_delete(&document) }
        guard let root = unsafe yaml_document_get_root_node(&document) else { return nil }
        var visited = 0
        return try unsafe convert(root, document: &document, depth: 0, visited: &visited)
    }

    /// Refuses flow collections (`[`, `{`) nested deeper than `maxDepth` before libyaml sees them:
    /// its loader builds the whole document first, and its scanner re-checks every open flow level
    /// at each token, so 200,000 `[` took over a minute before the depth check in `convert` ran.
    /// One linear pass; brackets inside quotes or comments count too, which only a recipe with more
    /// than `maxDepth` unclosed brackets in its text could notice.
    private static func checkFlowNesting(_ bytes: [UInt8]) throws(YAMLError) {
        var depth = 0
        var line = 1
        var column = 0
        for byte in bytes {
            column += 1
            switch byte {
            case UInt8(ascii: "\n"):
                line += 1
                column = 0
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > maxDepth { throw YAMLError(line: line, column: column, message: "nesting deeper than \(maxDepth) levels") }
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth = max(0, depth - 1)
            default: break
            }
        }
    }

    private static func convert(_ node: UnsafeMutablePointer<yaml_node_t>, document: inout yaml_document_t, depth: Int, visited: inout Int)
        throws(YAMLError) -> YAMLNode
    {
        let line = unsafe Int(node.pointee.start_mark.line) + 1
        let column = unsafe Int(node.pointee.start_mark.column) + 1
        visited += 1
        if depth > maxDepth { throw YAMLError(line: line, column: column, message: "nesting deeper than \(maxDepth) levels") }
        if visited > maxNodes { throw YAMLError(line: line, column: column, message: "more than \(maxNodes) values (alias expansion?)") }
        switch unsafe node.pointee.type {
        case YAML_SCALAR_NODE:
            let scalar = unsafe node.pointee.data.scalar
            let text = unsafe String(decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length), as: UTF8.self)
            return .scalar(text, line: line, column: column)
        case YAML_SEQUENCE_NODE:
            var items: [YAMLNode] = []
            var item = unsafe node.pointee.data.sequence.items.start
            while let current = unsafe item, unsafe current != node.pointee.data.sequence.items.top {
                guard let child = unsafe yaml_document_get_node(&document, current.pointee) else { break }
                unsafe items.append(try convert(child, document: &document, depth: depth + 1, visited: &visited))
                unsafe item = current + 1
            }
            return .sequence(items, line: line, column: column)
        case YAML_MAPPING_NODE:
            var pairs: [(key: String, keyLine: Int, keyColumn: Int, value: YAMLNode)] = []
            var pair = unsafe node.pointee.data.mapping.pairs.start
            while let current = unsafe pair, unsafe current != node.pointee.data.mapping.pairs.top {
                guard let keyNode = unsafe yaml_document_get_node(&document, current.pointee.key),
                    let valueNode = unsafe yaml_document_get_node(&document, current.pointee.value)
                else { break }
                let key = try unsafe convert(keyNode, document: &document, depth: depth + 1, visited: &visited)
                guard case .scalar(let name, let keyLine, let keyColumn) = key else {
                    throw YAMLError(line: key.line, column: key.column, message: "mapping keys must be plain text")
                }
                unsafe pairs.append((name, keyLine, keyColumn, try convert(valueNode, document: &document, depth: depth + 1, visited: &visited)))
                unsafe pair = current + 1
            }
            return .mapping(pairs, line: line, column: column)
        default:
            return .scalar("", line: line, column: column)
        }
    }
}

extension YAMLDocument {
    /// The linked libyaml's version (`yaml_get_version_string`).
    package static var libraryVersion: String { unsafe "libyaml " + String(cString: yaml_get_version_string()) }
}
