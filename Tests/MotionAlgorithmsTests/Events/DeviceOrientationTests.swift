import MotionAlgorithms
import RealModule
import Testing
import TestThreads

/// `DeviceOrientation`, the iio-sensor-proxy vocabulary and its exact reference rules.
@Suite(.computeBound) struct DeviceOrientationTests {
    @Test func rawValuesAndDirectionsAreUIKits() {
        #expect(DeviceOrientation.allCases.map(\.rawValue) == Array(0...6))
        let table: [(DeviceOrientation, SIMD3<Double>)] = [
            (.unknown, SIMD3(0, 0, 0)), (.portrait, SIMD3(0, -1, 0)), (.portraitUpsideDown, SIMD3(0, 1, 0)),
            (.landscapeLeft, SIMD3(-1, 0, 0)), (.landscapeRight, SIMD3(1, 0, 0)),
            (.faceUp, SIMD3(0, 0, -1)), (.faceDown, SIMD3(0, 0, 1)),
        ]
        for (orientation, gravity) in table {
            #expect(orientation.gravity(Double.self) == gravity)
            #expect(
                orientation.gravity(Float.self) == SIMD3<Float>(Float(gravity.x), Float(gravity.y), Float(gravity.z)))
            #expect(DeviceOrientation(name: orientation.description) == orientation)
        }
        #expect(DeviceOrientation.known == Array(DeviceOrientation.allCases.dropFirst()))
        #expect(DeviceOrientation(name: "sideways") == nil)
    }

    @Test func predicates() {
        #expect(DeviceOrientation.allCases.filter(\.isPortrait) == [.portrait, .portraitUpsideDown])
        #expect(DeviceOrientation.allCases.filter(\.isLandscape) == [.landscapeLeft, .landscapeRight])
        #expect(DeviceOrientation.allCases.filter(\.isFlat) == [.faceUp, .faceDown])
        #expect(
            DeviceOrientation.allCases.filter(\.isUpright) == [
                .portrait, .portraitUpsideDown, .landscapeLeft, .landscapeRight,
            ])
    }

    @Test func nearestDirection() {
        for orientation in DeviceOrientation.known {
            let g = orientation.gravity(Double.self)
            let (nearest, cosine) = DeviceOrientation.nearest(to: 0.9 * g + SIMD3(0.01, 0.02, -0.015))
            #expect(nearest == orientation)
            #expect(cosine > 0.99)
        }
        #expect(DeviceOrientation.nearest(to: SIMD3<Double>.zero).orientation == .unknown)
        #expect(DeviceOrientation.nearest(to: SIMD3<Double>(.nan, 0, 0)).orientation == .unknown)
        // 30° from portrait towards landscape left: portrait, cos 30°.
        let (nearest, cosine) = DeviceOrientation.nearest(
            to: direction(from: SIMD3(0, -1, 0), towards: SIMD3(-1, 0, 0), degrees: 30))
        #expect(nearest == .portrait)
        #expect(abs(cosine - Double.cos(.pi / 6)) < 1e-12)
    }

    /// The mapping between UIKit's and iio-sensor-proxy's names: the same edge up.
    @Test func iioSensorProxyNames() {
        let mapping: [(DeviceOrientation, IIOSensorProxyOrientation?)] = [
            (.unknown, nil), (.portrait, .normal), (.portraitUpsideDown, .bottomUp), (.landscapeLeft, .rightUp),
            (.landscapeRight, .leftUp), (.faceUp, nil), (.faceDown, nil),
        ]
        for (orientation, name) in mapping {
            #expect(orientation.iioSensorProxyOrientation == name)
            if let name { #expect(name.deviceOrientation == orientation) }
        }
        #expect(IIOSensorProxyOrientation.undefined.deviceOrientation == .unknown)
        #expect(
            IIOSensorProxyOrientation.allCases.map(\.rawValue) == [
                "undefined", "normal", "bottom-up", "left-up", "right-up",
            ])
        #expect(
            IIOSensorProxyTilt.allCases.map(\.description)
                == ["undefined", "vertical", "tilted-up", "tilted-down", "face-up", "face-down"])
    }

    @Test(arguments: [
        (0.0, IIOSensorProxyTilt.vertical), (20, .vertical), (-20, .vertical), (20.5, .tiltedUp), (-21, .tiltedDown),
        (69.9, .tiltedUp), (70, .faceUp), (-70, .faceDown), (90, .faceUp), (-90, .faceDown), (90.5, .undefined),
        (.nan, .undefined),
    ])
    func tiltClassBoundaries(degrees: Double, tilt: IIOSensorProxyTilt) {
        #expect(IIOSensorProxyTilt.forTilt(degrees: degrees) == tilt)
    }

    // MARK: iio-sensor-proxy's own rules, exactly

    /// A reading as iio-sensor-proxy's tests build it: integer raw values `1000 × unit vector` (rounded) with a
    /// scale of 9.81/1000 m/s² per count.
    static func reading(_ unit: SIMD3<Double>) -> SIMD3<Double> {
        (unit * 1000).rounded(.toNearestOrAwayFromZero) * (9.81 / 1000)
    }

    /// Upright in the screen plane at θ degrees from normal (y down) towards left-up (x down).
    static func upright(_ theta: Double) -> SIMD3<Double> {
        reading(direction(from: SIMD3(0, -1, 0), towards: SIMD3(1, 0, 0), degrees: theta))
    }

    @Test(arguments: [
        // previous normal: kept up to 54°, left-up from 55°.
        (IIOSensorProxyOrientation.normal, 54.0, IIOSensorProxyOrientation.normal), (.normal, 55, .leftUp),
        // previous left-up: kept down to 36°, normal at 35.6° (truncation and rounding put the edge near 35.5°).
        (.leftUp, 36, .leftUp), (.leftUp, 35.6, .normal),
        // previous undefined: 36°–54° stays undefined (both angles above 35°).
        (.undefined, 36, .undefined), (.undefined, 45, .undefined), (.undefined, 54, .undefined),
        (.undefined, 30, .normal), (.undefined, 60, .leftUp), (.undefined, -60, .rightUp), (.undefined, 180, .bottomUp),
    ])
    func referenceOrientationInThePlaneOfTheScreen(
        previous: IIOSensorProxyOrientation, theta: Double, expected: IIOSensorProxyOrientation
    ) {
        #expect(IIOSensorProxyReference.orientation(reading: Self.upright(theta), previous: previous) == expected)
    }

    @Test func referenceOrientationKeepsThePreviousValueNearFlat() {
        // Pitched back from upright by φ (x = 0): from 55° on, the previous value is kept.
        func pitched(_ phi: Double) -> SIMD3<Double> {
            Self.reading(direction(from: SIMD3(0, -1, 0), towards: SIMD3(0, 0, 1), degrees: phi))
        }
        #expect(IIOSensorProxyReference.orientation(reading: pitched(54), previous: .undefined) == .normal)
        #expect(IIOSensorProxyReference.orientation(reading: pitched(55), previous: .undefined) == .undefined)
        #expect(IIOSensorProxyReference.orientation(reading: pitched(80), previous: .rightUp) == .rightUp)
        #expect(IIOSensorProxyReference.orientation(reading: SIMD3(.nan, 0, 0), previous: .bottomUp) == .bottomUp)
    }

    /// SCALE() in orientation.c is `(int)(in × scale × 256.0 / 9.81)`, evaluated left to right: raw
    /// (−350, −250, 0) at upstream's test scale 9.81/256 stays (−350, −250), so portrait rounds to −54° and
    /// landscape to −36°, both beyond 35°: the previous value is kept. (`× (256 / 9.81)` instead truncates −250
    /// to −249, landscape rounds to −35, and the result would be right-up.)
    @Test func referenceScalesInOrientationCsOrder() {
        let reading = SIMD3<Double>(-350, -250, 0) * (9.81 / 256)
        #expect(IIOSensorProxyReference.orientation(reading: reading, previous: .undefined) == .undefined)
        #expect(IIOSensorProxyReference.orientation(reading: reading, previous: .normal) == .normal)
    }

    @Test func referenceTiltUsesTheOppositeSignOfZ() {
        // iio-sensor-proxy: tilted-up and face-up for z > 0.
        func pitched(_ phi: Double, z sign: Double) -> SIMD3<Double> {
            Self.reading(direction(from: SIMD3(0, -1, 0), towards: SIMD3(0, 0, sign), degrees: phi))
        }
        #expect(IIOSensorProxyReference.tilt(reading: pitched(30, z: 1)) == .tiltedUp)
        #expect(IIOSensorProxyReference.tilt(reading: pitched(80, z: 1)) == .faceUp)
        #expect(IIOSensorProxyReference.tilt(reading: pitched(10, z: 1)) == .vertical)
        #expect(IIOSensorProxyReference.tilt(reading: pitched(30, z: -1)) == .tiltedDown)
        #expect(IIOSensorProxyReference.tilt(reading: SIMD3(.infinity, 0, 0)) == .undefined)
        // In Core Motion's sign a device lying screen up reads z = −1 g: iio-sensor-proxy calls that face-down
        // while its orientation rules, on the same vector, call an upright device normal (systemd #40119).
        let faceUp = SIMD3<Double>(0, 0, -1) * 9.81
        #expect(IIOSensorProxyReference.tilt(reading: faceUp) == .faceDown)
        #expect(IIOSensorProxyReference.orientation(reading: SIMD3(0, -9.81, 0), previous: .undefined) == .normal)
    }
}
