/// Squarified treemap layout (Bruls, Huizing and van Wijk): rectangles with areas in proportion to
/// the values, as close to square as rows allow, in the order given (largest first reads best).
enum Treemap {
    struct Rect: Equatable {
        var x: Double, y: Double, width: Double, height: Double
    }

    /// Rectangles for `values` (non-negative) filling `bounds`; a zero value gets an empty rectangle.
    static func layout(_ values: [Double], in bounds: Rect) -> [Rect] {
        var result = [Rect](repeating: Rect(x: bounds.x, y: bounds.y, width: 0, height: 0), count: values.count)
        let total = values.reduce(0, +)
        guard total > 0, bounds.width > 0, bounds.height > 0 else { return result }
        let scale = bounds.width * bounds.height / total
        let order = values.indices.filter { values[$0] > 0 }
        var free = bounds
        var start = 0
        while start < order.count {
            let side = min(free.width, free.height)
            var end = start + 1
            var rowArea = values[order[start]] * scale
            var best = worst(areas: [rowArea], side: side)
            while end < order.count {
                let area = values[order[end]] * scale
                let candidate = worst(areas: order[start...end].map { values[$0] * scale }, side: side)
                if candidate > best { break }
                best = candidate
                rowArea += area
                end += 1
            }
            // Lay the row along the shorter side of what is free.
            let thickness = rowArea / side
            var offset = 0.0
            for index in order[start..<end] {
                let length = values[index] * scale / thickness
                result[index] =
                    free.width >= free.height
                    ? Rect(x: free.x, y: free.y + offset, width: thickness, height: length)
                    : Rect(x: free.x + offset, y: free.y, width: length, height: thickness)
                offset += length
            }
            if free.width >= free.height {
                free.x += thickness
                free.width -= thickness
            } else {
                free.y += thickness
                free.height -= thickness
            }
            start = end
        }
        return result
    }

    /// The worst aspect ratio of a row of `areas` laid along a side of length `side`.
    private static func worst(areas: [Double], side: Double) -> Double {
        let sum = areas.reduce(0, +)
        guard let largest = areas.max(), let smallest = areas.min(), sum > 0, smallest > 0 else { return .infinity }
        let sideSquared = side * side
        let sumSquared = sum * sum
        return max(sideSquared * largest / sumSquared, sumSquared / (sideSquared * smallest))
    }
}
