import MotionAlgorithms
import MotionCore
import MotionIIO
import Testing

/// iio-sensor-proxy's own test cases, ported as data (its inputs and the results it asserts) and run against
/// `MountMatrix` and `IIOSensorProxyReference`. Source: iio-sensor-proxy 3.9, commit 0085ddf8ecb1
/// (gitlab.freedesktop.org/hadess/iio-sensor-proxy; read from the maemo-leste-upstream-forks mirror).
///
/// Upstream feeds `orientation_calc()` and `tilt_calc()` the mount-matrix-corrected integer reading and its
/// scale, and SCALE() multiplies them first: our reference takes that product, `reading × scale` (m/s²).
@Suite("iio-sensor-proxy's upstream test cases")
struct IioSensorProxyUpstreamTests {
    /// `9.81 / ONEG` with `ONEG` 256 (src/test-orientation.c): 256 units are 1 g.
    static let oneGScale = 9.81 / 256

    // MARK: - src/test-orientation.c

    /// `/iio-sensor-proxy/orientation`: each reading from `undefined`, scale 9.81/256.
    @Test(arguments: [
        (SIMD3<Double>(0, -256, 0), IIOSensorProxyOrientation.normal),
        (SIMD3(-256, 0, 0), .rightUp),
        (SIMD3(256, 0, 0), .leftUp),
        (SIMD3(0, 256, 0), .bottomUp),
    ])
    func orientation(raw: SIMD3<Double>, expected: IIOSensorProxyOrientation) {
        #expect(IIOSensorProxyReference.orientation(reading: raw * Self.oneGScale, previous: .undefined) == expected)
    }

    /// `/iio-sensor-proxy/threshold`: a sequence, each reading given the previous expected result. (183, −256)
    /// is beyond 35° on both axes (keep); (176, −256) rounds to exactly 35° (not beyond).
    @Test func thresholdSequence() {
        let sequence: [(SIMD3<Double>, IIOSensorProxyOrientation)] = [
            ([0, -256, 0], .normal),
            ([183, -256, 0], .normal),
            ([176, -256, 0], .normal),
            ([183, -256, 0], .normal),
        ]
        var previous = IIOSensorProxyOrientation.undefined
        for (raw, expected) in sequence {
            let result = IIOSensorProxyReference.orientation(reading: raw * Self.oneGScale, previous: previous)
            #expect(result == expected, "\(raw) after \(previous)")
            previous = expected
        }
    }

    struct QuirkCase: Sendable, CustomTestStringConvertible {
        let device: String
        let raw: SIMD3<Double>
        let scale: Double
        let matrix: String
        let expected: IIOSensorProxyOrientation
        var testDescription: String { "\(device) \(raw)" }
    }

    /// `/iio-sensor-proxy/quirking`: two quirked tablets' readings, their scales and hwdb matrix.
    static let quirkMatrix = "0, -1, 0; -1, 0, 0; 0, 0, 1"
    static let quirks: [QuirkCase] = [
        .init(device: "Onda v975", raw: [523, 13, 5], scale: 0.019163, matrix: quirkMatrix, expected: .normal),
        .init(device: "Onda v975", raw: [8, 521, -67], scale: 0.019163, matrix: quirkMatrix, expected: .rightUp),
        .init(device: "Winbook TW100", raw: [24, 0, -21], scale: 0.306457, matrix: quirkMatrix, expected: .normal),
        .init(device: "Winbook TW100", raw: [15, -25, -14], scale: 0.306457, matrix: quirkMatrix, expected: .leftUp),
    ]

    /// Parse, apply (`M · raw`), truncate to integers (upstream passes the float result to `int` parameters),
    /// then the orientation from `undefined`.
    @Test(arguments: quirks)
    func quirking(_ quirk: QuirkCase) throws {
        let matrix = try MountMatrix.parse(quirk.matrix).get()
        let corrected = matrix.apply(to: quirk.raw).rounded(.towardZero)
        let result = IIOSensorProxyReference.orientation(reading: corrected * quirk.scale, previous: .undefined)
        #expect(result == quirk.expected)
    }

    // MARK: - src/test-mount-matrix.c

    /// `/iio-sensor-proxy/mount-matrix`: the y/z swap, the empty text (identity) and an all-zero z row.
    @Test func mountMatrix() throws {
        let swapYZ = try MountMatrix.parse("1, 0, 0; 0, 0, 1; 0, 1, 0").get()
        #expect(swapYZ.apply(to: [0, -256, 0]) == [0, 0, -256])
        let empty = try MountMatrix.parse("").get()
        #expect(empty == .identity)
        #expect(empty.apply(to: [0, -256, 0]) == [0, -256, 0])
        // Upstream warns "In mount matrix '0, 1, 0; 1, 0, 0; 0, 0, 0', axis z is all zeroes, which is invalid".
        #expect(MountMatrix.parse("0, 1, 0; 1, 0, 0; 0, 0, 0").failureReason == "has an all-zero row for axis z")
    }

    // MARK: - tests/integration-test.py (the daemon on umockdev; here its readings through the rules)

    /// `test_iio_poll_accel`: scale 10; the poll driver reads the sysfs values "-25.6" and "72.4" as the
    /// integers −25 and 72. Upstream asserts normal/vertical after the claim, then right-up, tilted-down, face-up.
    @Test func pollAccelerometer() {
        let scale = 10.0
        var orientation = IIOSensorProxyReference.orientation(reading: [0, -25 * scale, 0], previous: .undefined)
        #expect(orientation == .normal)
        #expect(IIOSensorProxyReference.tilt(reading: [0, -25 * scale, 0]) == .vertical)
        orientation = IIOSensorProxyReference.orientation(reading: [-25 * scale, 0, 0], previous: orientation)
        #expect(orientation == .rightUp)
        #expect(IIOSensorProxyReference.tilt(reading: [-25 * scale, 0, -25 * scale]) == .tiltedDown)
        #expect(IIOSensorProxyReference.tilt(reading: [-25 * scale, 0, 72 * scale]) == .faceUp)
    }

    /// `test_iio_scale_decimal_separator2`: scale 0.000001, y = −256000000 → normal, then x = −256000000 → right-up.
    @Test func pollAccelerometerWithATinyScale() {
        let scale = 0.000001
        let first = IIOSensorProxyReference.orientation(reading: [0, -256_000_000 * scale, 0], previous: .undefined)
        #expect(first == .normal)
        #expect(IIOSensorProxyReference.orientation(reading: [-256_000_000 * scale, 0, 0], previous: first) == .rightUp)
    }

    /// tests/iio-buffer-accel-data/orientation-normal.bin: one 24-byte scan.
    static let orientationNormal = """
        670069fc69fc7ffe7ffe000000000000ce81744509fc5b16
        """
    /// tests/iio-buffer-accel-data/orientation-left-up.bin: 15 scans.
    static let orientationLeftUp = """
        ad00c3fcc3fcbbfdbbfd0000000000006f8b224809fc5b16a20069fc69fc44fd44fd0000000000006feee64909fc5b16
        8700b9fbb9fb5dfd5dfd000000000000b78cba4b09fc5b161101cefbcefb8bfd8bfd003c00000000e52c6c4e09fc5b16
        520166fc66fc7cfd7cfd0000000000006de1355009fc5b16760105fd05fdf1fdf1fd0000000000008971d15309fc5b16
        b301aafdaafd81fe81fe003c00000000bb0da35509fc5b16e80131fe31fe10ff10ff00000000000040cb755709fc5b16
        0e02bbfebbfe6bff6bff0061000000009bd7415909fc5b1656022cff2cff8fff8fff000000000000fd4e105b09fc5b16
        fe02b3ffb3ff74ff74ff00fb00000000354fd75c09fc5b168b03010001006aff6aff000000000000d87ba95e09fc5b16
        0004eeffeeffaaffaaff00020000000003e25d6109fc5b16c10385ff85ffaeffaeff000000000000aa7e7a6909fc5b16
        480312ff12ff37ff37ff0000000000001b82fa6d09fc5b16
        """

    /// `test_iio_buffer_accel`: x, y, z `le:s16/32>>0` (the upper 16 stored bits hold junk) at indices 0–2, a
    /// `le:s64/64>>0` timestamp at 3; no scale attribute (1.0). The driver uses the last scan read. Upstream
    /// asserts normal, then left-up, then normal again.
    @Test func bufferAccelerometer() throws {
        let channel = try #require(ScanElementType(parsing: "le:s16/32>>0"))
        let timestamp = try #require(ScanElementType(parsing: "le:s64/64>>0"))
        let layout = ScanLayout(channels: [(0, channel), (1, channel), (2, channel), (3, timestamp)])
        #expect(layout.scanSize == 24)
        func lastScan(_ hex: String) throws -> SIMD3<Double> {
            let bytes = try #require(Self.bytes(hex))
            #expect(bytes.count % layout.scanSize == 0)
            let start = bytes.count - layout.scanSize
            return bytes.withUnsafeBytes { scan in
                SIMD3((0..<3).map { Double(channel.decode(scan, at: start + layout.elements[$0].offset)) })
            }
        }
        let normal = try lastScan(Self.orientationNormal)
        let leftUp = try lastScan(Self.orientationLeftUp)
        #expect(normal == [103, -919, -385])  // as peers.md §2.8 and the daemon's log read them
        #expect(leftUp == [840, -238, -201])
        var orientation = IIOSensorProxyReference.orientation(reading: normal, previous: .undefined)
        #expect(orientation == .normal)
        orientation = IIOSensorProxyReference.orientation(reading: leftUp, previous: orientation)
        #expect(orientation == .leftUp)
        orientation = IIOSensorProxyReference.orientation(reading: normal, previous: orientation)
        #expect(orientation == .normal)
    }

    /// Hex digits (white space ignored) to bytes; `nil` when malformed.
    static func bytes(_ hex: String) -> [UInt8]? {
        let digits = Array(hex.filter { !$0.isWhitespace })
        guard digits.count % 2 == 0 else { return nil }
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16) }
            .reduce(into: [UInt8]?([])) { result, byte in
                guard let byte else { return result = nil }
                result?.append(byte)
            }
    }
}

extension Result where Failure == MotionError {
    /// The rejection's reason (its message after the quoted text), or `nil` when parsed.
    var failureReason: String? {
        guard case .failure(let error) = self, let quote = error.message.lastIndex(of: "\"") else { return nil }
        return String(error.message[error.message.index(after: quote)...].dropFirst())
    }
}
