import MapFormat
import Testing

/// The store path rules as the documentation states them, one at a time, without any shortcut.
private func expectedProblem(_ path: [UInt8]) -> StorePath.Problem? {
    if path.first == UInt8(ascii: "/") { return .absolute }
    if path.isEmpty { return .empty }
    if path.contains(0) || path.contains(UInt8(ascii: "\\")) { return .forbiddenByte }
    for component in path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
        if component.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) { return .climbs }
        if component.isEmpty || component.elementsEqual([UInt8(ascii: ".")]) { return .emptyComponent }
    }
    return path.count > StorePath.maxLength ? .tooLong : nil
}

@Suite struct StorePathRulesTests {
    /// Paths drawn from the bytes the rules are about (and a plain letter), long enough for the
    /// eight-bytes-at-a-time check and short enough that every pattern falls at every offset of its
    /// windows: each gets the problem the plain rules give.
    @Test func everyPathGetsTheProblemThePlainRulesGive() {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [UInt8] = [UInt8(ascii: "a"), UInt8(ascii: "a"), UInt8(ascii: "."), UInt8(ascii: "/"), UInt8(ascii: "\\"), 0]
        var accepted = 0
        for round in 0..<60_000 {
            let count = 1 + round % 24
            // Few forbidden bytes, so that the component rules are reached often.
            let path = (0..<count).map { _ in alphabet[Int.random(in: 0..<(round % 3 == 0 ? 6 : 4), using: &generator)] }
            let problem = StorePath.problem(in: path.span)
            #expect(problem == expectedProblem(path), "\(String(decoding: path, as: UTF8.self).debugDescription)")
            if problem == nil { accepted += 1 }
        }
        #expect(accepted > 1000)
    }

    @Test(
        arguments: [
            ("regions/europe/ee/37/353/routing/2/0/194.rt", nil),
            ("./regions/europe/x.db", StorePath.Problem.emptyComponent), ("regions/europe/x.db/.", .emptyComponent),
            ("../regions/europe/x.db", .climbs), ("regions/europe/x.db/..", .climbs), ("regions/eu/../x.db", .climbs),
            ("regions//europe/x.db", .emptyComponent), ("regions/europe/x.db/", .emptyComponent), ("/regions/europe", .absolute),
            ("..regions/europe/..x/x..", nil), ("regions/europe/x\\y.db", .forbiddenByte),
            (String(repeating: "a/", count: 512) + "b", .tooLong),
        ] as [(String, StorePath.Problem?)])
    func namedPathsGetTheirProblem(_ path: String, _ problem: StorePath.Problem?) {
        #expect(StorePath.problem(path) == problem)
        #expect(expectedProblem(Array(path.utf8)) == problem)
    }
}
