// The values MapStore's API speaks in (`RegionID`, `MapVersion`, `ByteCount`, `BundleDigest`, the
// catalog's types) are declared once, in MapFormat, which the build tool shares. An app imports
// MapStore alone: this makes MapFormat's public declarations and their members visible to it, also
// under `MemberImportVisibility` (`Tests/EndToEndTests/DocSnippetTests` compiles the documented snippets so).
@_exported import MapFormat
