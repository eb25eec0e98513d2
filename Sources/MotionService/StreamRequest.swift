package import MotionCore
package import MotionDBus
package import MotionProtocol
package import MotionTrace

/// What a client asks `OpenStream` for, checked: the kind, its interval, its format and options.
package struct StreamRequest: Hashable, Sendable {
    /// What flows on the stream.
    package typealias Kind = Motion1Interface.StreamKind

    package var kind: Kind
    /// Seconds between records (samples, device motion); events ignore it. Positive.
    package var interval: Double
    package var format: TraceFormat
    /// The sensors of a `samples` stream.
    package var sensors: SensorSet
    /// The frame of a `device-motion` stream.
    package var frame: AttitudeReferenceFrame
    /// An `orientation` stream's names: iio-sensor-proxy's orientation and tilt, or UIKit's.
    package var iioSensorProxyNames: Bool
    /// How many records wait for a slow reader before the oldest are dropped.
    package var bufferLimit: Int

    /// Records faster than this, in seconds (25 Hz), need the high-rate right (raw samples and device motion).
    package static let highRateInterval = Motion1Interface.highRateInterval
    /// The default and largest per-stream buffers, in records.
    package static let defaultBufferLimit = 1024
    package static let maximumBufferLimit = 65536
    /// The longest interval a stream may ask, in seconds (an hour): longer is surely a mistake, and rates are
    /// derived from intervals.
    package static let maximumInterval = 3600.0
    /// The most entries an options dictionary may have (every option at most once).
    package static let maximumOptions = 8
    /// The most names a `sensors` option may list.
    package static let maximumSensorNames = 3

    /// `true` for raw samples and device motion: the kinds whose rate is a right (``needsHighRateRight``).
    package var isRaw: Bool { kind == .samples || kind == .deviceMotion }

    /// `true` for a raw stream faster than 25 Hz (``highRateInterval``).
    package var needsHighRateRight: Bool {
        isRaw && interval < Self.highRateInterval * (1 - 1e-9)
    }

    /// Checks the arguments of `OpenStream(s kind, d interval, s format, a{sv} options)` against what the
    /// machine has; a refusal says what was wrong and what is accepted.
    package init(
        kind kindName: String, interval: Double, format formatName: String, options: [(String, DBusValue)],
        available: SensorSet, frames: [AttitudeReferenceFrame]
    ) throws(DBusErrorReply) {
        guard let kind = Kind(rawValue: kindName) else {
            throw .invalidArguments(
                "unknown stream kind '\(Self.excerpt(kindName))': use "
                    + Kind.allCases.map(\.rawValue).joined(separator: ", "))
        }
        guard interval > 0, interval <= Self.maximumInterval else {
            throw .invalidArguments(
                "the interval must be a number of seconds above 0 and at most \(Self.maximumInterval), not \(interval)")
        }
        guard let format = TraceFormat(rawValue: formatName) else {
            throw .invalidArguments("unknown format '\(Self.excerpt(formatName))': use csv or jsonl")
        }
        guard options.count <= Self.maximumOptions else {
            throw .invalidArguments(
                "\(options.count) options: at most \(Self.maximumOptions) (sensors, frame, names, buffer, each once)")
        }
        var seen: Set<String> = []
        for (key, _) in options where !seen.insert(key).inserted {
            throw .invalidArguments("the option '\(Self.excerpt(key))' is given twice")
        }
        if format == .csv && kind.isEvent {
            throw .invalidArguments("\(kind.rawValue) events have no CSV form: use jsonl")
        }
        self.kind = kind
        self.interval = interval
        self.format = format
        sensors = available
        frame = .xArbitraryZVertical
        iioSensorProxyNames = false
        bufferLimit = Self.defaultBufferLimit
        for (key, value) in options {
            switch (key, value) {
            case (Motion1Interface.OptionKey.sensors, .array("s", let names)) where kind == .samples:
                var chosen: SensorSet = []
                guard names.count <= Self.maximumSensorNames else {
                    throw .invalidArguments("the sensors option lists \(names.count) names: at most \(Self.maximumSensorNames)")
                }
                for case .string(let name) in names {
                    guard let sensor = SensorSet(shortNames: name) else {
                        throw DBusErrorReply(
                            Motion1Interface.unknownSensorError,
                            "unknown sensor '\(Self.excerpt(name))': use accel, gyro or mag")
                    }
                    guard available.isSuperset(of: sensor) else {
                        throw DBusErrorReply(
                            Motion1Interface.unknownSensorError,
                            "this machine has no '\(name)' sensor; it has \(available.isEmpty ? "none" : "\(available)")")
                    }
                    chosen.formUnion(sensor)
                }
                guard !chosen.isEmpty else { throw .invalidArguments("the sensors option lists no sensor") }
                sensors = chosen
            case (Motion1Interface.OptionKey.frame, .string(let name)) where kind == .deviceMotion:
                guard let frame = AttitudeReferenceFrame(shortName: name) else {
                    throw .invalidArguments(
                        "unknown frame '\(Self.excerpt(name))': use "
                            + AttitudeReferenceFrame.allCases.map(\.shortName).joined(separator: ", "))
                }
                guard frames.contains(frame) else {
                    throw DBusErrorReply(
                        Motion1Interface.unknownSensorError,
                        "the \(name) frame needs \(frame.requiredSensors); this machine has "
                            + "\(available.isEmpty ? "none" : "\(available)")")
                }
                self.frame = frame
            case (Motion1Interface.OptionKey.names, .string(let names)) where kind == .orientation:
                guard names == "uikit" || names == "iio-sensor-proxy" else {
                    throw .invalidArguments("unknown names '\(Self.excerpt(names))': use uikit or iio-sensor-proxy")
                }
                iioSensorProxyNames = names == "iio-sensor-proxy"
            case (Motion1Interface.OptionKey.buffer, .uint32(let limit)):
                guard limit >= 1, limit <= Self.maximumBufferLimit else {
                    throw .invalidArguments("the buffer must hold 1 to \(Self.maximumBufferLimit) records, not \(limit)")
                }
                bufferLimit = Int(limit)
            default:
                throw .invalidArguments(
                    "unknown option '\(Self.excerpt(key))' of type \(Self.excerpt(value.signature)) for a \(kind.rawValue) stream: "
                        + "samples take sensors (as), device-motion frame (s), orientation names (s), all buffer (u)")
            }
        }
        if kind == .samples && sensors.isEmpty {
            throw DBusErrorReply(Motion1Interface.unknownSensorError, "this machine has no motion sensor")
        }
        if kind == .deviceMotion && !frames.contains(frame) {
            throw DBusErrorReply(
                Motion1Interface.unknownSensorError,
                "device motion needs an accelerometer and a gyroscope; this machine has "
                    + "\(available.isEmpty ? "none" : "\(available)")")
        }
        if kind.isEvent && !available.contains(.accelerometer) {
            throw DBusErrorReply(
                Motion1Interface.unknownSensorError, "\(kind.rawValue) events need an accelerometer; this machine has none")
        }
    }

    /// The start of a client's string, for an error message: at most 64 characters.
    static func excerpt(_ text: String) -> String {
        text.count <= 64 ? text : text.prefix(64) + "…"
    }
}
