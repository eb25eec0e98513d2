public import MotionCore

/// The updates of one subscription, as an asynchronous sequence: accelerometer readings, device motion, shake
/// events or orientation changes, in order.
///
/// The sequence ends when the source ends (the last update of a recording), throws the source's
/// `MotionError` (a bad trace row, a device that went away), and ends early — cancelling the
/// subscription — when the consuming task is cancelled. A subscription is also cancelled when its sequence
/// and iterator are released, and, for the scoped `with…Updates` forms, when the scope ends.
///
/// It is a single-consumer sequence: iterate it once. Updates the consumer cannot keep up with are dropped
/// according to the subscription's ``MotionBufferingPolicy`` and counted in ``droppedCount``.
public struct MotionUpdates<Element: Sendable>: AsyncSequence, Sendable {
    public typealias Failure = MotionError

    let subscription: Subscription<Element>

    /// The number of updates dropped so far because this consumer was behind by the policy's limit.
    public var droppedCount: Int { subscription.buffer.droppedCount }

    /// The buffering policy the subscription was made with.
    public var bufferingPolicy: MotionBufferingPolicy { subscription.buffer.policy }

    /// Cancels the subscription: the sequence ends after the update being consumed, and the sensor stops when no
    /// other subscription needs it. Idempotent.
    public func cancel() {
        subscription.cancel()
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(subscription: subscription)
    }

    /// Iterates a ``MotionUpdates`` sequence.
    public struct Iterator: AsyncIteratorProtocol {
        public typealias Failure = MotionError

        let subscription: Subscription<Element>
        var started = false

        /// The next update; `nil` at the end of the source or once the subscription is cancelled.
        public mutating func next() async throws(MotionError) -> Element? {
            if !started {
                started = true
                subscription.engine.ensureProducing()
            }
            return try await subscription.buffer.next()
        }
    }
}

/// Keeps a subscription registered while a sequence or iterator refers to it.
final class Subscription<Element: Sendable>: Sendable {
    let id: Int
    let buffer: DeliveryBuffer<Element>
    let engine: MotionEngine

    init(id: Int, buffer: DeliveryBuffer<Element>, engine: MotionEngine) {
        self.id = id
        self.buffer = buffer
        self.engine = engine
    }

    func cancel() {
        buffer.close()
        engine.unsubscribe(id)
    }

    deinit {
        cancel()
    }
}
