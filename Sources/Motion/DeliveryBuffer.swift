import DequeModule
import Dispatch
import MotionCore


#if canImport(Glibc)
import Glibc
#endif

/// The bounded queue between the engine (one producer) and one consumer: either an async iterator, or a handler
/// drained on a dispatch or operation queue.
///
/// Guarantees: elements arrive in order; at most `policy.limit` wait, and the rest are dropped and counted;
/// after ``finish(_:)`` the consumer sees the waiting elements, then the end (or the error). A handler runs
/// serially, never under the lock, and never again once ``stopHandler()`` has returned.
final class DeliveryBuffer<Element: Sendable>: Sendable {
    /// How a handler consumer is scheduled: a closure that runs the drain on the user's queue.
    typealias Scheduler = @Sendable (@escaping @Sendable () -> Void) -> Void
    typealias Handler = @Sendable (Element?, MotionError?) -> Void

    private enum Consumer {
        case iterator
        /// A handler, and what runs once the source has ended normally (handlers of the public API get nothing then).
        case handler(Scheduler, Handler, ended: (@Sendable () -> Void)?)
    }

    private struct State {
        var items: Deque<Element> = []
        var dropped = 0
        /// Set once the producer is done: `.success` for the end of the source, or its error.
        var end: Result<Void, MotionError>?
        /// Set when the consumer has gone (iterator cancelled or dropped, handler stopped).
        var isClosed = false
        /// An iterator waiting for an element.
        var waitingConsumer: UnsafeContinuation<Result<Element?, MotionError>, Never>?
        /// The producer waiting for room (lossless replay).
        var waitingProducer: UnsafeContinuation<Void, Never>?
        /// A drain is scheduled or running on the handler's queue.
        var isDraining = false
        /// The thread running the handler now, if any.
        var handlerThread: pthread_t?
        /// `stopHandler()` callers waiting for the running handler to return.
        var stopWaiters: [DispatchSemaphore] = []
        /// The end has been handed to the consumer.
        var endDelivered = false

        /// After the handler returned: no handler runs now; the `stopHandler()` callers waiting for it, to signal.
        mutating func handlerReturned() -> [DispatchSemaphore] {
            handlerThread = nil
            defer { stopWaiters = [] }
            return stopWaiters
        }

        /// Queues `element`, or drops it (the newest or the oldest, per `policy`) when `policy.limit` wait.
        mutating func enqueue(_ element: Element, _ policy: MotionBufferingPolicy) {
            if items.count < policy.limit {
                items.append(element)
            } else {
                dropped += 1
                if policy.kind == .newest {
                    items.removeFirst()
                    items.append(element)
                }
            }
        }
    }

    /// What to do after releasing the lock.
    private enum Action {
        case none
        case resume(UnsafeContinuation<Result<Element?, MotionError>, Never>)
        case schedule(Scheduler)
    }

    /// Where ``sendSynchronously(_:)`` takes an element.
    private enum SynchronousRoute {
        case closed
        /// Straight to the handler, on this thread.
        case direct
        /// Queued; `drain`: this thread drains the queue now (no drain runs).
        case queued(drain: Bool)
    }

    /// One step of a handler drain.
    private enum Step {
        /// An element to hand to the handler, and the producer that waited for the room its pop made.
        case element(Element, UnsafeContinuation<Void, Never>?)
        case error(MotionError)
        case ended(@Sendable () -> Void)
        case done
    }

    let policy: MotionBufferingPolicy
    /// The handler runs on the sender's thread, inside ``send(_:)`` (``init(policy:synchronousHandler:ended:passEnded:)``).
    private let isSynchronous: Bool
    /// Runs on the producer's thread after each pass over a sample that sent this buffer something (a synchronous
    /// consumer's cue to write what it rendered).
    let passEnded: (@Sendable () -> Void)?
    private let consumer: Consumer
    private let state = LockedState(State())

    /// A buffer read by an async iterator through ``next()``.
    init(policy: MotionBufferingPolicy) {
        self.policy = policy
        passEnded = nil
        consumer = .iterator
        isSynchronous = false
    }

    /// A buffer whose elements are passed to `handler`, run by `scheduler`; `ended` runs (by `scheduler`, after
    /// the last element) when the source ends normally.
    ///
    /// A scheduler that runs the drain at once (`{ $0() }`) makes a synchronous consumer: the handler runs on the
    /// producer's thread inside ``send(_:)``, outside the lock.
    init(
        policy: MotionBufferingPolicy, scheduler: @escaping Scheduler, handler: @escaping Handler,
        ended: (@Sendable () -> Void)? = nil, passEnded: (@Sendable () -> Void)? = nil
    ) {
        self.policy = policy
        self.passEnded = passEnded
        consumer = .handler(scheduler, handler, ended: ended)
        isSynchronous = false
    }

    /// A buffer whose handler runs at once on the thread that sends (a synchronous consumer: the engine's producer
    /// thread), outside the lock, as with a scheduler that runs the drain at once, but without scheduling a drain
    /// for each element: an element sent while nothing waits goes straight to the handler.
    init(
        policy: MotionBufferingPolicy, synchronousHandler handler: @escaping Handler,
        ended: (@Sendable () -> Void)? = nil, passEnded: (@Sendable () -> Void)? = nil
    ) {
        self.policy = policy
        self.passEnded = passEnded
        consumer = .handler({ drain in drain() }, handler, ended: ended)
        isSynchronous = true
    }

    /// The number of elements dropped because the consumer was `policy.limit` elements behind.
    var droppedCount: Int { state.withLock { $0.dropped } }

    /// `false` once the consumer has gone: the engine then removes the subscription.
    var isOpen: Bool { state.withLock { !$0.isClosed && $0.end == nil } }

    // MARK: Producer

    /// Hands an element to the consumer, or queues it, or drops it (per the policy). Returns `false` when the
    /// consumer has gone.
    @discardableResult
    func send(_ element: Element) -> Bool {
        if isSynchronous { return sendSynchronously(element) }
        let (open, action): (Bool, Action) = state.withLock { state in
            guard !state.isClosed && state.end == nil else { return (false, .none) }
            if let waiting = state.waitingConsumer {
                state.waitingConsumer = nil
                return (true, .resume(waiting))
            }
            state.enqueue(element, policy)
            if case .handler(let scheduler, _, _) = consumer, !state.isDraining {
                state.isDraining = true
                return (true, .schedule(scheduler))
            }
            return (true, .none)
        }
        switch action {
        case .none: break
        case .resume(let continuation): continuation.resume(returning: .success(element))
        case .schedule(let scheduler): scheduler { self.drain() }
        }
        return open
    }

    /// ``send(_:)`` for a synchronous handler: when nothing waits and no drain runs, the element goes to the handler
    /// directly (two lock round trips, nothing allocated); otherwise it is queued and drained as any handler's.
    private func sendSynchronously(_ element: Element) -> Bool {
        guard case .handler(_, let handler, _) = consumer else { return false }
        let route: SynchronousRoute = state.withLock { state in
            guard !state.isClosed && state.end == nil else { return .closed }
            if !state.isDraining && state.items.isEmpty {
                state.isDraining = true
                state.handlerThread = pthread_self()
                return .direct
            }
            state.enqueue(element, policy)
            guard !state.isDraining else { return .queued(drain: false) }
            state.isDraining = true
            return .queued(drain: true)
        }
        switch route {
        case .closed:
            return false
        case .queued(let drainNow):
            if drainNow { drain() }
            return true
        case .direct:
            handler(element, nil)
            // As after each of the drain's elements: the stop waiters go; anything that came meanwhile (an element
            // queued by the handler's own sends, the end) is drained as usual.
            let (waiters, more) = state.withLock { state in
                let waiters = state.handlerReturned()
                let more = !state.isClosed && (!state.items.isEmpty || (state.end != nil && !state.endDelivered))
                if !more { state.isDraining = false }
                return (waiters, more)
            }
            waiters.forEach { $0.signal() }
            if more { drain() }
            return true
        }
    }

    /// Queues `element` without handing it to anyone: for the engine, under its own lock, on a buffer no consumer
    /// has seen yet (the current orientation of a new subscription). ``deliverPrimed()`` hands it over.
    func prime(_ element: Element) {
        state.withLock { state in
            if state.items.count < policy.limit { state.items.append(element) }
        }
    }

    /// Schedules a handler's drain of what ``prime(_:)`` queued (an iterator takes it at its next `next()`).
    func deliverPrimed() {
        let scheduler: Scheduler? = state.withLock { state in
            guard case .handler(let scheduler, _, _) = consumer, !state.isDraining, !state.items.isEmpty else {
                return nil
            }
            state.isDraining = true
            return scheduler
        }
        scheduler? { self.drain() }
    }

    /// Suspends the producer until the consumer has room for one more element (or has gone).
    func waitForRoom() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.isClosed || state.end != nil || state.items.count < policy.limit { return true }
                state.waitingProducer = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Ends the stream after the waiting elements: normally, or with an error. Idempotent.
    func finish(_ end: Result<Void, MotionError>) {
        let (action, producer): (Action, UnsafeContinuation<Void, Never>?) = state.withLock { state in
            guard state.end == nil && !state.isClosed else { return (.none, nil) }
            state.end = end
            let producer = state.waitingProducer
            state.waitingProducer = nil
            if let waiting = state.waitingConsumer {
                state.waitingConsumer = nil
                state.endDelivered = true
                return (.resume(waiting), producer)
            }
            if case .handler(let scheduler, _, _) = consumer, !state.isDraining {
                state.isDraining = true
                return (.schedule(scheduler), producer)
            }
            return (.none, producer)
        }
        producer?.resume()
        switch action {
        case .none: break
        case .resume(let continuation): continuation.resume(returning: end.map { () -> Element? in nil })
        case .schedule(let scheduler): scheduler { self.drain() }
        }
    }

    // MARK: Iterator consumer

    /// The next element, `nil` at the end or once the consumer's task is cancelled, or the source's error.
    func next() async throws(MotionError) -> Element? {
        let result = await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Result<Element?, MotionError>, Never>) in
                let (immediate, producer) = state.withLock {
                    state -> (Result<Element?, MotionError>?, UnsafeContinuation<Void, Never>?) in
                    if let element = state.items.popFirst() {
                        let producer = state.waitingProducer
                        state.waitingProducer = nil
                        return (.success(element), producer)
                    }
                    if state.isClosed { return (.success(nil), nil) }
                    if let end = state.end {
                        if state.endDelivered { return (.success(nil), nil) }
                        state.endDelivered = true
                        return (end.map { () -> Element? in nil }, nil)
                    }
                    state.waitingConsumer = continuation
                    return (nil, nil)
                }
                producer?.resume()
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            close()
        }
        return try result.get()
    }

    /// The consumer has gone: drops the waiting elements and wakes whoever waits. Idempotent.
    func close() {
        let (consumer, producer) = state.withLock { state in
            state.isClosed = true
            state.items.removeAll()
            let waiting = (state.waitingConsumer, state.waitingProducer)
            state.waitingConsumer = nil
            state.waitingProducer = nil
            return waiting
        }
        consumer?.resume(returning: .success(nil))
        producer?.resume()
    }

    // MARK: Handler consumer

    /// Runs on the handler's queue: passes the waiting elements to the handler one at a time, then the end.
    private func drain() {
        guard case .handler(_, let handler, let ended) = consumer else { return }
        while true {
            let step: Step = state.withLock { state in
                if state.isClosed {
                    state.isDraining = false
                    return .done
                }
                if let element = state.items.popFirst() {
                    state.handlerThread = pthread_self()
                    // The room this pop makes goes to the producer waiting for it now, in the same lock: resumed
                    // after the handler instead, it could find the room already taken by a send made meanwhile.
                    let producer = state.waitingProducer
                    state.waitingProducer = nil
                    return .element(element, producer)
                }
                if let end = state.end, !state.endDelivered {
                    state.endDelivered = true
                    switch end {
                    case .failure(let error):
                        state.handlerThread = pthread_self()
                        return .error(error)
                    case .success:
                        if let ended {
                            state.handlerThread = pthread_self()
                            return .ended(ended)
                        }
                    }
                }
                state.isDraining = false
                return .done
            }
            switch step {
            case .element(let element, let producer):
                producer?.resume()
                handler(element, nil)
            case .error(let error): handler(nil, error)
            case .ended(let ended): ended()
            case .done: return
            }
            let waiters = state.withLock { $0.handlerReturned() }
            waiters.forEach { $0.signal() }
        }
    }

    /// Stops a handler consumer: when this returns, the handler is not running (unless this is called from the
    /// handler itself) and never runs again.
    func stopHandler() {
        let (waiter, producer): (DispatchSemaphore?, UnsafeContinuation<Void, Never>?) = state.withLock { state in
            state.isClosed = true
            state.items.removeAll()
            let producer = state.waitingProducer
            state.waitingProducer = nil
            guard let running = state.handlerThread, pthread_equal(running, pthread_self()) == 0 else {
                return (nil, producer)
            }
            let semaphore = DispatchSemaphore(value: 0)
            state.stopWaiters.append(semaphore)
            return (semaphore, producer)
        }
        producer?.resume()
        waiter?.wait()
    }
}
