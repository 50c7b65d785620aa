import Foundation

/// One line of `mappack --json`: a value whose fields are the ones its schema in `Schemas/`
/// declares. `Terminal.record` adds the `"schema"` tag, so no line can go out untagged.
protocol JSONRecord: Encodable, Sendable {
    /// The name and version of its schema file (`JSONSchemas`).
    static var schema: String { get }
}

/// One event of a verb that reports its work as it goes (`Schemas/mappack-events.schema.json`);
/// each has an `event` field naming it.
protocol JSONEvent: JSONRecord {
    var event: String { get }
}

extension JSONEvent {
    static var schema: String { JSONSchemas.events }
}

// swift-format-ignore: UseSynthesizedInitializer
/// A field that is always there: `null` when it has no value, where a plain optional would be
/// left out (the schemas say which fields are nullable and which are optional).
@propertyWrapper
struct Nullable<Value: Encodable & Sendable>: Encodable, Sendable {
    var wrappedValue: Value?

    // Written out: without it, the memberwise init of a type holding a `@Nullable` takes a `Nullable`.
    init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

/// The bytes of one `--json` line.
enum JSONLine {
    /// `record` with its schema tag, keys sorted, and a line feed; or, when it cannot be encoded
    /// (a number that is not finite), a `failed` event saying so and `encoded` false: a line is
    /// never dropped without a word.
    static func encode(_ record: some JSONRecord) -> (line: Data, encoded: Bool) {
        do {
            return (try sortedWithSchema(record), true)
        } catch {
            let failed = FailedEvent(error: "mappack could not write a \(type(of: record).schema) line: \(error)", exitCode: 1)
            // Strings and an integer always encode; the literal is the same line, should it not.
            let line =
                (try? sortedWithSchema(failed))
                ?? Data(#"{"error":"mappack could not write a JSON line","event":"failed","exitCode":1,"schema":"mappack-events/1"}"#.utf8 + [0x0A])
            return (line, false)
        }
    }

    /// Encoded by `JSONLineEncoder` (keys in its defined order, the one lines always had:
    /// case-insensitive, so `mappackVersion` before `mapVersion`), the schema tag added.
    private static func sortedWithSchema<Record: JSONRecord>(_ record: Record) throws -> Data {
        Data(try JSONLineEncoder.encode(record, adding: ("schema", Record.schema)) + [0x0A])
    }
}
