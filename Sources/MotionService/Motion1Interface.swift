package import MotionDBus

/// swift-motion's own D-Bus API, `org.swiftmotion.Motion1`: the devices, and streams of raw samples, device
/// motion, shakes and orientation changes over file descriptors (`Docs/Service.md`).
package enum Motion1Interface {
    /// The bus name and interface, `org.swiftmotion.Motion1`.
    package static let name = "org.swiftmotion.Motion1"
    /// The object, `/org/swiftmotion/Motion1`.
    package static let path = "/org/swiftmotion/Motion1"

    package static let interface = DBusInterface(
        name,
        methods: [
            .init("ListDevices", outputs: [("devices", "aa{sv}")]),
            .init(
                "OpenStream", inputs: [("kind", "s"), ("interval", "d"), ("format", "s"), ("options", "a{sv}")],
                outputs: [("stream", "h"), ("id", "u")]),
            .init("CloseStream", inputs: [("id", "u")]),
            .init("StreamStatistics", inputs: [("id", "u")], outputs: [("delivered", "t"), ("dropped", "t")]),
        ],
        properties: [
            .init("Version", "s", emitsChange: false),
            .init("Sensors", "as"),
            .init("ReferenceFrames", "as"),
            .init("HighRateInterval", "d", emitsChange: false),
            .init("OpenStreams", "u"),
        ])

    /// A sensor, frame or event kind that this machine does not have, or a name that means nothing.
    package static let unknownSensorError = "org.swiftmotion.Motion1.Error.UnknownSensor"
    /// A stream id that is not open, or not the caller's.
    package static let unknownStreamError = "org.swiftmotion.Motion1.Error.UnknownStream"
    /// The caller already has a stream with the same request open.
    package static let alreadyOpenError = "org.swiftmotion.Motion1.Error.AlreadyOpen"
}
