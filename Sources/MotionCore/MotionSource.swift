/// Where a `MotionManager` (module Motion) gets its samples: a provider (a live IIO device, a recorded trace, the
/// motion service, samples in memory or a sequence of your own) and, for a recording, how fast it is replayed.
///
/// Each backend module adds its constructors: `.device(…)` (MotionIIO), `.trace(…)` (MotionTrace), `.service(…)`
/// (MotionClient); ``samples(_:pacing:)``, ``sequence(_:pacing:)`` and ``stream(_:)`` are here. A program links
/// only the backends it imports: a trace-only program links neither libiio nor libsystemd. The manager behaves
/// the same on each: the same updates for the same samples.
public struct MotionSource: Sendable, CustomStringConvertible {
    /// Reads the samples.
    public let provider: any MotionSampleProvider
    /// How a recording is replayed (ignored for live providers).
    public let pacing: ReplayPacing

    /// A source for `provider`, replayed with `pacing` when it is a recording.
    public init(_ provider: some MotionSampleProvider, pacing: ReplayPacing = .realTime) {
        self.provider = provider
        self.pacing = pacing
    }

    /// Samples in memory, in timestamp order, replayed as a trace is.
    public static func samples(_ samples: [MotionSample], pacing: ReplayPacing = .realTime) -> MotionSource {
        MotionSource(SampleArrayProvider(samples: samples), pacing: pacing)
    }

    /// Samples from an asynchronous sequence the caller feeds (another driver, a network stream, a test), taken
    /// as they come, like a live device: no pacing, and the updates end when the sequence ends (or with its
    /// error, as a `MotionError`). The sequence is iterated once, from the first subscription on; while no
    /// subscription is active it is not read.
    public static func stream<Samples: AsyncSequence & Sendable>(_ samples: Samples) -> MotionSource
    where Samples.Element == MotionSample {
        MotionSource(AsyncSampleProvider(samples))
    }

    /// Samples from a sequence (a `MotionTesting` `Simulation`, a generator, a file format of your own), taken
    /// as the replay goes, in constant memory, and replayed as a trace is: paced by `pacing`, each subscription
    /// from where the replay is. The sequence is iterated once; its first sample is taken when the manager is
    /// created, and its sensors are the ones the source reports available.
    /// - Parameters:
    ///   - samples: The samples, in timestamp order (seconds).
    ///   - pacing: Real time (default), a multiple of it, or as fast as the consumers take the updates.
    public static func sequence<Samples: Sequence & Sendable>(
        _ samples: Samples, pacing: ReplayPacing = .realTime
    ) -> MotionSource where Samples.Element == MotionSample {
        MotionSource(SampleSequenceProvider(samples), pacing: pacing)
    }

    /// `true` for live devices, the service and streams; `false` for recordings.
    public var isLive: Bool { provider.isLive }

    public var description: String { isLive ? provider.description : "\(provider) (\(pacing))" }
}

/// A kind of input: describes it and opens its reader. Conform to add an input of your own (a network feed, a
/// file format) that `MotionManager` treats as it treats the built-in ones.
public protocol MotionSampleProvider: Sendable, CustomStringConvertible {
    /// `true` when samples come at their own pace (a device, the service, a stream); `false` for a recording,
    /// which the manager paces (`ReplayPacing`) and which pauses, keeping its place, while nobody subscribes.
    var isLive: Bool { get }
    /// Opens the reader, once per manager: a recording is opened (and its header checked) here, a device only
    /// at the reader's first ``SampleSource/wait(_:)``.
    func makeReader() throws(MotionError) -> any MotionSampleReader
}

/// A provider whose readings faster than some rate need a right the caller may lack (the motion service's raw
/// samples above 25 Hz). A subscription that only prefers a faster rate (the pedometer's 50 Hz) asks no faster
/// than ``openInterval``, so that it works for every user.
package protocol RightLimitedSampleProvider: MotionSampleProvider {
    /// The shortest update interval everyone may ask, in seconds.
    var openInterval: Double { get }
}

/// A provider's reader, used by one producer task at a time (a manager hands it from one producer to the next,
/// each waiting for the previous one to end), so it need not be `Sendable` or locked.
public protocol MotionSampleReader: AnyObject, SampleSource {
    /// The sensors the input can deliver now: a trace's header, the devices present, the service's sensors.
    /// May do I/O (udev, a bus call); empty when unknown. Called from any thread, also while a producer reads:
    /// it must be safe to call concurrently with the other requirements. A subscription that needs a sensor
    /// missing from a non-empty answer ends at once with `MotionError.Code.unsupported`.
    func availableSensors() -> SensorSet
    /// The executor the producer task prefers: the thread that waits for the input (a device's reactor) or that
    /// may block on it (a trace's own thread); `nil` for Swift's cooperative pool.
    var preferredExecutor: (any TaskExecutor)? { get }
    /// Stops reading until the next ``SampleSource/wait(_:)`` (a device's buffers are disabled, a stream closed);
    /// a recording keeps its place.
    func pause()
}

/// A reader that hands over the samples at hand in one call (a trace file): `MotionManager.run` then pays for the
/// reader being an existential once per batch instead of once per sample.
package protocol BatchSampleReader: MotionSampleReader {
    /// Appends the samples at hand to `samples`, at most `maximumCount` in all, and says why it stopped.
    func takeBatch(
        _ demand: SourceDemand, into samples: inout [MotionSample], maximumCount: Int
    ) -> SampleBatchEnd
}

/// Why a reader stopped appending samples (``MotionSampleReader/takeSamples(_:into:maximumCount:)``).
package enum SampleBatchEnd: Sendable {
    /// `samples` holds `maximumCount`: more may be at hand.
    case full
    /// No more sample is at hand: await ``SampleSource/wait(_:)``.
    case wait
    /// The source has ended.
    case ended
    /// Reading failed, after the samples appended.
    case failed(MotionError)
}

extension MotionSampleReader {
    public var preferredExecutor: (any TaskExecutor)? { nil }
    public func pause() {}

    /// Appends the samples at hand to `samples`, at most `maximumCount` in all, one ``SampleSource/next(_:)`` each
    /// (a ``BatchSampleReader`` takes them in one call), and says why it stopped.
    package func takeSamples(
        _ demand: SourceDemand, into samples: inout [MotionSample], maximumCount: Int
    ) -> SampleBatchEnd {
        if let batches = self as? any BatchSampleReader {
            return batches.takeBatch(demand, into: &samples, maximumCount: maximumCount)
        }
        var reader = self
        while samples.count < maximumCount {
            do {
                switch try reader.next(demand) {
                case .sample(let sample): samples.append(sample)
                case .wait: return .wait
                case .ended: return .ended
                }
            } catch {
                return .failed(error)
            }
        }
        return .full
    }
}

/// What a source must read now.
public struct SourceDemand: Hashable, Sendable {
    /// The sensors to read (empty: every sensor the input has).
    public var sensors: SensorSet
    /// The smallest update interval asked for, in seconds (0: every sample): a device's rate follows it.
    public var fastestInterval: Double

    /// A demand for `sensors` at `fastestInterval` seconds.
    public init(sensors: SensorSet, fastestInterval: Double = 0) {
        self.sensors = sensors
        self.fastestInterval = fastestInterval
    }
}

/// A step of a ``SampleSource``.
public enum SampleSourceStep: Sendable {
    /// The next sample.
    case sample(MotionSample)
    /// The next sample is not at hand: await ``SampleSource/wait(_:)``, then ask again.
    case wait
    /// The source has ended.
    case ended
}

/// Where a sample loop's samples come from: a trace, samples in memory, a device, a caller's sequence.
///
/// Samples at hand are taken synchronously (``next(_:)``), so that a replay at full speed costs no asynchronous
/// call per sample; only waiting for more (a device's next wake-up) is asynchronous.
public protocol SampleSource {
    /// The next sample at hand, ``SampleSourceStep/wait`` when it must be awaited, or the end.
    mutating func next(_ demand: SourceDemand) throws(MotionError) -> SampleSourceStep
    /// Waits until ``next(_:)`` has a sample or the end.
    nonisolated(nonsending) mutating func wait(_ demand: SourceDemand) async throws(MotionError)
    /// Keeps `sample`, taken but not processed (the loop stopped while pacing it), for the next run. A live
    /// source drops it: it is stale once the input has stopped.
    mutating func putBack(_ sample: MotionSample)
}

/// How fast a recording is replayed.
public struct ReplayPacing: Hashable, Sendable, CustomStringConvertible {
    enum Kind: Hashable, Sendable {
        case scaled(Double)
        case asFastAsConsumed
    }

    let kind: Kind

    /// Each sample is delivered when as much time has passed on the manager's clock, since the first one, as
    /// separates their timestamps.
    public static let realTime = ReplayPacing(kind: .scaled(1))

    /// As ``realTime``, `factor` times faster (2 replays a 10 s trace in 5 s).
    /// - Precondition: `factor > 0` and finite.
    public static func scaled(by factor: Double) -> ReplayPacing {
        precondition(factor > 0 && factor.isFinite, "The replay speed factor must be > 0, got \(factor).")
        return ReplayPacing(kind: .scaled(factor))
    }

    /// No clock: the next sample is delivered as soon as every consumer has room for it, so nothing is dropped
    /// and the replay runs as fast as the slowest consumer takes it. Replaying a trace twice this way gives
    /// identical updates.
    public static let asFastAsConsumed = ReplayPacing(kind: .asFastAsConsumed)

    /// The factor on real time, or `nil` for ``asFastAsConsumed``.
    public var speedFactor: Double? {
        if case .scaled(let factor) = kind { return factor }
        return nil
    }

    public var description: String {
        switch kind {
        case .scaled(1): "real time"
        case .scaled(let factor): "\(factor)× real time"
        case .asFastAsConsumed: "as fast as consumed"
        }
    }
}

