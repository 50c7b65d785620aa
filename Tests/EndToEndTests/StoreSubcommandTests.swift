import Foundation
import TestSupport
import Testing

/// `mappack store VERB`: each store verb is a command of its own, with its own options (issue 35
/// item 5). An option of another store verb is bad usage naming both; `store --help` is one usage
/// listing the verbs; `store VERB --help` lists that verb's options only.
@Suite struct StoreSubcommandTests {
    @Test(arguments: [
        (["regions", "--to", "X"], "--to"),
        (["install", "--check"], "--check"),
        (["version", "--catalog", "c.json"], "--catalog"),
        (["move", "--image", "i", "--to", "X"], "--image"),
    ])
    func anOptionOfAnotherStoreVerbIsRefused(_ given: [String], option: String) throws {
        let folder = TemporaryFolder("store-subcommand-option")
        let verb = given[0]
        let result = try Tool.mappack(["store"] + given + ["--storage", folder.join("s"), "--cache", folder.join("c")])
        #expect(result.status == 2, "store \(given.joined(separator: " ")): \(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("unknown option \(option) for mappack store \(verb)"), "\(result.stderr)")
        // Nothing was opened or created for a command that did not parse.
        #expect(!FileManager.default.fileExists(atPath: folder.join("s")))
    }

    @Test func storeHelpIsOneUsageListingTheVerbs() throws {
        for arguments in [["store", "--help"], ["store", "-h"], ["store", "help"], ["help", "store"]] {
            let result = try Tool.mappack(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            let text = result.stdout
            #expect(text.components(separatedBy: "usage:").count == 2, "\(arguments) prints more than one usage:\n\(text)")
            #expect(text.contains("usage: mappack store <verb>"), "\(text)")
            for verb in ["install", "status", "repair", "regions", "delete", "verify", "cache", "move", "update", "download", "available", "version"]
            {
                #expect(text.contains("\n  \(verb)"), "\(arguments) does not list \(verb):\n\(text)")
            }
            #expect(text.contains("--storage DIR") && text.contains("--quiet"), "\(text)")
        }
    }

    @Test func aStoreVerbsHelpListsItsOwnOptionsOnly() throws {
        let cases: [(verb: String, has: [String], lacks: [String])] = [
            (
                "install", ["--image PATH", "--full", "--storage DIR", "--cache DIR", "--trust PUBKEY", "--quiet"],
                ["--to", "--check", "--catalog", "--lang"]
            ),
            ("move", ["--to DIR", "--storage DIR"], ["--image", "--check", "--catalog", "--lang", "--full"]),
            ("update", ["--catalog URL", "--check"], ["--to", "--image", "--lang"]),
            ("regions", ["--lang L"], ["--to", "--image", "--check", "--catalog"]),
        ]
        for (verb, has, lacks) in cases {
            for arguments in [["store", verb, "--help"], ["help", "store", verb]] {
                let result = try Tool.mappack(arguments)
                #expect(result.status == 0, "\(arguments): \(result.stderr)")
                #expect(result.stdout.hasPrefix("usage: mappack store \(verb)"), "\(arguments):\n\(result.stdout)")
                #expect(result.stdout.components(separatedBy: "usage:").count == 2, "\(arguments):\n\(result.stdout)")
                for option in has { #expect(result.stdout.contains(option), "\(arguments) lacks \(option):\n\(result.stdout)") }
                for option in lacks { #expect(!result.stdout.contains(option), "\(arguments) shows \(option):\n\(result.stdout)") }
            }
        }
    }

    @Test func aStoreVerbWithoutItsStorageSaysSo() throws {
        let result = try Tool.mappack(["store", "regions"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("mappack store regions needs --storage DIR and --cache DIR"), "\(result.stderr)")
    }
}
