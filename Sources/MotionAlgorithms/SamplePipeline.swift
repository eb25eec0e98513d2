public import MotionCore

/// A first-order filter applied to every vector a pipeline delivers.
public struct VectorFilter: Hashable, Sendable, CustomStringConvertible {
    enum Kind: Hashable, Sendable {
        case lowPass
        case highPass
    }

    let kind: Kind
    /// The smoothing (fixed factor or cutoff frequency).
    public let smoothing: FilterSmoothing<Double>
    /// Where the filter's state starts.
    public let start: FilterStart

    /// A low-pass filter, `y = α·x + (1 − α)·y_prev`.
    public static func lowPass(_ smoothing: FilterSmoothing<Double>, start: FilterStart = .zero) -> VectorFilter {
        VectorFilter(kind: .lowPass, smoothing: smoothing, start: start)
    }

    /// A high-pass filter, `x − lowpass(x)`.
    public static func highPass(_ smoothing: FilterSmoothing<Double>, start: FilterStart = .zero) -> VectorFilter {
        VectorFilter(kind: .highPass, smoothing: smoothing, start: start)
    }

    /// For example `low-pass factor 0.1 from zero` or `high-pass cutoff 5.0 Hz from first-sample`.
    public var description: String {
        let name = kind == .lowPass ? "low-pass" : "high-pass"
        let amount: String
        switch smoothing.kind {
        case .factor(let alpha): amount = "factor \(alpha)"
        case .cutoff(let hertz): amount = "cutoff \(hertz) Hz"
        }
        return "\(name) \(amount) from \(start == .zero ? "zero" : "first-sample")"
    }
}

/// What `motionctl stream` does to each sample: keep the chosen sensors, filter each sensor's vectors at the full
/// input rate, then deliver at most one reading per sensor per update interval.
///
/// Each sensor has its own filter state and its own ``UpdateIntervalGate``, so sensors at different rates are
/// thinned independently, as Core Motion's separate `…UpdateInterval` properties. Pure and allocation-free.
public struct SamplePipeline: Sendable {
    /// The sensors kept; readings of other sensors are dropped.
    public let sensors: SensorSet
    /// The filter applied to every kept vector, or `nil`.
    public let filter: VectorFilter?

    var accelerometer: Channel
    var gyroscope: Channel
    var magnetometer: Channel

    /// Creates a pipeline.
    /// - Parameters:
    ///   - sensors: The sensors to keep.
    ///   - updateInterval: Seconds between deliveries of each sensor (0 delivers every reading).
    ///   - filter: The filter for every kept vector, or `nil` for none.
    public init(sensors: SensorSet = .all, updateInterval: Double = 0, filter: VectorFilter? = nil) {
        self.sensors = sensors
        self.filter = filter
        let channel = Channel(filter: filter, interval: updateInterval)
        (accelerometer, gyroscope, magnetometer) = (channel, channel, channel)
    }

    /// Processes one input sample; returns the sample to deliver, or `nil` when no reading is due.
    public mutating func process(_ sample: MotionSample) -> MotionSample? {
        var output = MotionSample(timestamp: sample.timestamp)
        let t = sample.timestamp
        if sensors.contains(.accelerometer), let a = sample.acceleration {
            output.acceleration = accelerometer.process(a.vector, at: t).map { Acceleration($0) }
        }
        if sensors.contains(.gyroscope), let g = sample.rotationRate {
            output.rotationRate = gyroscope.process(g.vector, at: t).map { RotationRate($0) }
        }
        if sensors.contains(.magnetometer), let m = sample.magneticField {
            output.magneticField = magnetometer.process(m.vector, at: t).map { MagneticField($0) }
        }
        return output.sensors.isEmpty ? nil : output
    }

    /// One sensor's filter state and interval gate.
    struct Channel: Sendable {
        enum FilterState: Sendable {
            case none
            case lowPass(LowPassFilter<Double>)
            case highPass(HighPassFilter<Double>)
        }

        var filterState: FilterState
        var gate: UpdateIntervalGate

        init(filter: VectorFilter?, interval: Double) {
            gate = UpdateIntervalGate(interval: interval)
            switch filter {
            case let filter? where filter.kind == .lowPass:
                filterState = .lowPass(LowPassFilter(smoothing: filter.smoothing, start: filter.start))
            case let filter?:
                filterState = .highPass(HighPassFilter(smoothing: filter.smoothing, start: filter.start))
            case nil:
                filterState = .none
            }
        }

        mutating func process(_ v: SIMD3<Double>, at t: Double) -> SIMD3<Double>? {
            let filtered: SIMD3<Double>
            switch filterState {
            case .none:
                filtered = v
            case .lowPass(var filter):
                filtered = filter.update(v, at: t)
                filterState = .lowPass(filter)
            case .highPass(var filter):
                filtered = filter.update(v, at: t)
                filterState = .highPass(filter)
            }
            return gate.admit(at: t) ? filtered : nil
        }
    }
}
