package import MotionDBus

/// swift-motion's own D-Bus API, `org.swiftmotion.Motion1`: the devices, and streams of raw samples, device
/// motion, shakes and orientation changes over file descriptors (`Docs/Service.md`). The one definition of its
/// names, signatures and option keys, for the service (MotionService) and its client (MotionClient).
package enum Motion1Interface {
    /// The bus name and interface, `org.swiftmotion.Motion1`.
    package static let name = "org.swiftmotion.Motion1"
    /// The object, `/org/swiftmotion/Motion1`.
    package static let path = "/org/swiftmotion/Motion1"

    package static let interface = DBusInterface(
        name,
        methods: [
            .init(Method.listDevices, outputs: [("devices", "aa{sv}")]),
            .init(
                Method.openStream, inputs: [("kind", "s"), ("interval", "d"), ("format", "s"), ("options", "a{sv}")],
                outputs: [("stream", "h"), ("id", "u")]),
            .init(Method.closeStream, inputs: [("id", "u")]),
            .init(Method.streamStatistics, inputs: [("id", "u")], outputs: [("delivered", "t"), ("dropped", "t")]),
            .init(
                Method.openHistory, inputs: [("from", "d"), ("to", "d"), ("format", "s"), ("options", "a{sv}")],
                outputs: [("history", "h")]),
        ],
        properties: [
            .init(Property.version, "s", emitsChange: false),
            .init(Property.sensors, "as"),
            .init(Property.referenceFrames, "as"),
            .init(Property.highRateInterval, "d", emitsChange: false),
            .init(Property.openStreams, "u"),
        ])

    /// The methods' names.
    package enum Method {
        package static let listDevices = "ListDevices"
        /// `OpenStream(s kind, d interval, s format, a{sv} options) → (h stream, u id)`: the stream is the read
        /// end of a pipe.
        package static let openStream = "OpenStream"
        package static let closeStream = "CloseStream"
        package static let streamStatistics = "StreamStatistics"
        /// `OpenHistory(d from, d to, s format, a{sv} options) → (h history)`: the samples the service recorded
        /// (`--history`) from `from` to `to` (Unix seconds; −∞ and +∞ for open ends) as a canonical trace with t in
        /// Unix seconds, on the read end of a pipe that ends with the answer. Options: `kind` (s: `samples`, the
        /// default, `device-motion` or `events`, as recorded) and, for samples, `sensors` (as).
        package static let openHistory = "OpenHistory"
    }

    /// The properties' names.
    package enum Property {
        package static let version = "Version"
        /// `as`: the sensors' short names (`accel`, `gyro`, `mag`).
        package static let sensors = "Sensors"
        package static let referenceFrames = "ReferenceFrames"
        package static let highRateInterval = "HighRateInterval"
        package static let openStreams = "OpenStreams"
    }

    /// The keys of `OpenStream`'s options.
    package enum OptionKey {
        /// `as`: a `samples` stream's sensors.
        package static let sensors = "sensors"
        /// `s`: a `device-motion` stream's reference frame.
        package static let frame = "frame"
        /// `s`: an `orientation` stream's names, `uikit` or `iio-sensor-proxy`.
        package static let names = "names"
        /// `u`: how many records wait for a slow reader.
        package static let buffer = "buffer"
        /// `s`: what a history query returns: `samples`, `device-motion` or `events` (``HistoryKind``).
        package static let kind = "kind"
    }

    /// What a history query returns (`OpenHistory`'s `kind` option, `motionctl history --kind`).
    package enum HistoryKind: String, Sendable, CaseIterable {
        /// The recorded samples, as a canonical trace.
        case samples
        /// The recorded device motion: `motionctl attitude --all`'s records.
        case deviceMotion = "device-motion"
        /// The recorded shakes and orientation changes, as JSON objects (`# event:` lines in CSV).
        case events
    }

    /// What flows on a stream (`OpenStream`'s `kind`).
    package enum StreamKind: String, Sendable, CaseIterable {
        /// Sensor readings, as a canonical trace (`Docs/TraceFormat.md`).
        case samples
        /// Fused device motion in a reference frame: `motionctl attitude --all`'s records.
        case deviceMotion = "device-motion"
        /// Shake events (`motionctl shake --format jsonl`).
        case shake
        /// Orientation changes (`motionctl orientation --format jsonl`).
        case orientation
        /// Steps, one record per step (`motionctl steps --format jsonl`'s `step` records).
        case steps
        /// Activity changes (`motionctl activity --format jsonl`).
        case activity

        /// Events: JSON Lines only, the interval ignored, from the accelerometer.
        package var isEvent: Bool { self == .shake || self == .orientation || self == .steps || self == .activity }
    }

    /// The polkit action of the high-rate right; the service names it when it refuses a rate for want of it.
    package static let highRateAction = "org.swiftmotion.Motion1.high-rate"
    /// The polkit action of opening a stream.
    package static let claimSensorAction = "org.swiftmotion.Motion1.claim-sensor"

    /// Raw samples and device motion faster than this, in seconds (25 Hz), need the high-rate right: they carry
    /// enough of the device's vibration to reveal typing and speech.
    package static let highRateInterval = 0.04

    /// A sensor, frame or event kind that this machine does not have, or a name that means nothing.
    package static let unknownSensorError = "org.swiftmotion.Motion1.Error.UnknownSensor"
    /// A stream id that is not open, or not the caller's.
    package static let unknownStreamError = "org.swiftmotion.Motion1.Error.UnknownStream"
    /// The service records no history (it runs without `--history`).
    package static let noHistoryError = "org.swiftmotion.Motion1.Error.NoHistory"
    /// The caller already has a stream with the same request open.
    package static let alreadyOpenError = "org.swiftmotion.Motion1.Error.AlreadyOpen"
}
