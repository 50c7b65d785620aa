/// A public key an image or a catalog must be signed with, as read from a key file.
package struct TrustedKey: Sendable {
    package let path: String
    package let text: String
    package init(path: String, text: String) {
        self.path = path
        self.text = text
    }
}
