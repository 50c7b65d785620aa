import Foundation

/// How `Publisher` signs the catalog it writes (`catalog.json.sig`, see `CatalogSignature`).
public struct CatalogSigning: Sendable {
    /// The private key's text (`mappack keygen`'s `.key`) and the file it came from.
    public var privateKey: String
    public var keyPath: String
    /// The catalog version; nil takes the larger of the previous signature's version + 1 (when the output
    /// folder has one) and the build clock in whole seconds since 1970.
    public var version: Int64?
    /// How long the signature is valid after `clock`.
    public var validFor: TimeInterval
    /// How long `catalog.json.timestamp` is valid after `clock` (at most `validFor`): short, as TUF's
    /// timestamp role, so a frozen mirror is found out within a day; publish again to renew it.
    public var timestampValidFor: TimeInterval = 86_400
    /// The build clock (`SOURCE_DATE_EPOCH` or now).
    public var clock: Date
    /// The public key text that signs the next catalogs, for key rotation.
    public var nextKey: String?
    /// `--force`: sign a version far ahead of the clock, or over a damaged previous signature.
    public var force = false
    /// `--reset-lineage`: the new private key (and its file) that cosigns a new epoch and signs next.
    public var reset: (privateKey: String, path: String)?
    /// How far ahead of the clock (and of the previous version) a version may go without `force`: ten
    /// years in seconds. Versions default to the clock in seconds, so a larger jump is a mistake that
    /// would make every later catalog a "rollback".
    public static let maxStep: Int64 = 3650 * 86_400

    /// A signing configuration.
    public init(privateKey: String, keyPath: String, version: Int64? = nil, validFor: TimeInterval = 30 * 86_400, clock: Date, nextKey: String? = nil)
    {
        self.privateKey = privateKey
        self.keyPath = keyPath
        self.version = version
        self.validFor = validFor
        self.clock = clock
        self.nextKey = nextKey
    }

    /// Parses an `--expires` value: a positive whole number of hours (`36h`) or days (`14d`), at most 10 years.
    public static func duration(_ text: String) -> TimeInterval? {
        guard let unit = text.last, let count = Int(text.dropLast()), count > 0 else { return nil }
        let scale: Int
        switch unit {
        case "h": scale = 3600
        case "d": scale = 86_400
        default: return nil
        }
        let (seconds, overflow) = count.multipliedReportingOverflow(by: scale)
        return !overflow && seconds <= 3650 * 86_400 ? TimeInterval(seconds) : nil
    }
}
