extension Duration {
    /// The duration in seconds, for the layers below that count time in seconds (`RetryPolicy`, `usleep`).
    var inSeconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) / 1e18
    }
}
