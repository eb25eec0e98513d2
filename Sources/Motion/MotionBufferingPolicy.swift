/// How many undelivered updates a subscription keeps for a consumer that is slower than the sensor, and which
/// ones it drops when that many are waiting.
///
/// Every subscription is bounded, so a stalled consumer never makes memory grow: at most `limit` updates wait,
/// and each update that does not fit is counted (``MotionUpdates/droppedCount``,
/// ``MotionManager/droppedUpdateCount(_:)``). When the source is a recording replayed with
/// ``ReplayPacing/asFastAsConsumed``, nothing is dropped: the replay waits for the slowest consumer instead.
public struct MotionBufferingPolicy: Hashable, Sendable, CustomStringConvertible {
    enum Kind: Hashable, Sendable {
        case newest
        case oldest
    }

    let kind: Kind
    /// The most updates kept waiting for the consumer.
    public let limit: Int

    /// Keeps the `limit` most recent updates: when full, the oldest waiting update is dropped. Right for state
    /// (attitude, orientation), where only the latest matters.
    /// - Precondition: `limit ≥ 1`.
    public static func bufferingNewest(_ limit: Int) -> Self {
        precondition(limit >= 1, "A subscription keeps at least one update, got a limit of \(limit).")
        return Self(kind: .newest, limit: limit)
    }

    /// Keeps the `limit` oldest updates: when full, new updates are dropped until the consumer catches up. Right
    /// for raw samples and events, where a contiguous run matters more than the latest value.
    /// - Precondition: `limit ≥ 1`.
    public static func bufferingOldest(_ limit: Int) -> Self {
        precondition(limit >= 1, "A subscription keeps at least one update, got a limit of \(limit).")
        return Self(kind: .oldest, limit: limit)
    }

    /// The default for raw accelerometer, gyroscope and magnetometer samples: `bufferingOldest(1024)`
    /// (about 1 s at 1 kHz).
    public static let samplesDefault = bufferingOldest(1024)
    /// The default for device motion: `bufferingNewest(1)`, the latest attitude.
    public static let stateDefault = bufferingNewest(1)
    /// The default for shake events and orientation changes: `bufferingOldest(64)`, so no event is lost to a
    /// briefly busy consumer.
    public static let eventsDefault = bufferingOldest(64)

    public var description: String {
        switch kind {
        case .newest: "bufferingNewest(\(limit))"
        case .oldest: "bufferingOldest(\(limit))"
        }
    }
}
