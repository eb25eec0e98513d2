package import MotionDBus

/// iio-sensor-proxy's D-Bus API (3.x, `net.hadess.SensorProxy.xml`), which `motiond` serves for its clients
/// (GNOME, KDE, `monitor-sensor`).
package enum SensorProxyInterface {
    /// The bus name, `net.hadess.SensorProxy`.
    package static let busName = "net.hadess.SensorProxy"
    /// The main object, `/net/hadess/SensorProxy`.
    package static let path = "/net/hadess/SensorProxy"
    /// The compass object, `/net/hadess/SensorProxy/Compass`.
    package static let compassPath = "/net/hadess/SensorProxy/Compass"
    /// The compass interface, `net.hadess.SensorProxy.Compass`.
    package static let compassInterfaceName = "net.hadess.SensorProxy.Compass"

    /// The main interface: accelerometer orientation and tilt, ambient light and proximity.
    package static let main = DBusInterface(
        busName,
        methods: ["Accelerometer", "Light", "Proximity"].flatMap {
            [DBusInterface.Method("Claim" + $0), DBusInterface.Method("Release" + $0)]
        },
        properties: [
            .init("HasAccelerometer", "b"),
            .init("AccelerometerOrientation", "s"),
            .init("AccelerometerTilt", "s"),
            .init("HasAmbientLight", "b"),
            .init("LightLevelUnit", "s"),
            .init("LightLevel", "d"),
            .init("HasProximity", "b"),
            .init("ProximityNear", "b"),
        ])

    /// The compass interface: heading in degrees clockwise from magnetic north, −1 when unknown.
    package static let compass = DBusInterface(
        compassInterfaceName,
        methods: [.init("ClaimCompass"), .init("ReleaseCompass")],
        properties: [.init("HasCompass", "b"), .init("CompassHeading", "d")])

    /// The error of a `Release…` without a matching `Claim…` from the same client.
    package static let notClaimedError = "org.swiftmotion.Motion1.Error.NotClaimed"
    /// The error of a `Claim…` whose sensor gave no reading in time, or went away while the claim waited.
    package static let noReadingError = "org.swiftmotion.Motion1.Error.NoReading"
}
