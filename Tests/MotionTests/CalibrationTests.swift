import Foundation
import Motion
import MotionAlgorithms
import MotionCore
import MotionTesting
import TestFiles
import Testing

/// Calibration that survives restarts: what device motion learned (`MotionManager.calibration`), saved and loaded
/// (`CalibrationFile`), given to the next session (`MotionConfiguration.calibration`).
@Suite struct CalibrationTests {
    /// 40 s of tumbling with a gyroscope bias and a hard-iron offset (µT), then a hold.
    static func tumbling(seed: UInt64) throws -> [MotionSample] {
        var scenario = Scenario.tumbling(turns: 40)
        scenario.append(.hold(5))
        let options = SimulationOptions(
            rate: 100, sensors: .all, seed: seed, gyroscopeBias: SIMD3(0.01, -0.006, 0.004),
            magnetometerOffset: SIMD3(35, -22, 48))
        return Array(try Simulation(scenario: scenario, options: options))
    }

    static func path(_ name: String) -> String {
        ScratchFolder.path("calibration-\(name)", suffix: ".json")
    }

    /// The calibration a session learned, through a file, starts the next one calibrated.
    @Test func aSavedCalibrationStartsTheNextSessionCalibrated() async throws {
        let first = try MotionManager(source: .samples(try Self.tumbling(seed: 1), pacing: .asFastAsConsumed))
        #expect(first.calibration == nil)
        for try await _ in first.deviceMotionUpdates(using: .xMagneticNorthZVertical, interval: 0) {}
        let learned = try #require(first.calibration)
        #expect(learned.magnetometerAccuracy == .high)
        #expect(abs(learned.gyroscopeBias.x - 0.01) < 0.002 && abs(learned.gyroscopeBias.y + 0.006) < 0.002)

        let file = Self.path("saved")
        try CalibrationFile.save(learned, to: file)
        let loaded = try #require(try CalibrationFile.load(from: file))
        #expect(loaded.gyroscopeBias == learned.gyroscopeBias)
        #expect(loaded.magnetometerBias == learned.magnetometerBias)
        #expect(loaded.magnetometerAccuracy == learned.magnetometerAccuracy)

        // Another session (another recording of the same device): calibrated from its first sample, where a
        // session from zero reports the raw field as uncalibrated.
        let samples = try Self.tumbling(seed: 2)
        var configuration = MotionConfiguration()
        configuration.calibration = loaded
        let restored = try MotionManager(source: .samples(samples, pacing: .asFastAsConsumed), configuration: configuration)
        let fresh = try MotionManager(source: .samples(samples, pacing: .asFastAsConsumed))
        func firstAccuracy(_ manager: MotionManager) async throws -> MagneticFieldCalibrationAccuracy? {
            for try await motion in manager.deviceMotionUpdates(using: .xMagneticNorthZVertical, interval: 0) {
                if let field = motion.magneticField { return field.accuracy }
            }
            return nil
        }
        #expect(try await firstAccuracy(restored) == .high)
        #expect(try await firstAccuracy(fresh) == .uncalibrated)
    }

    @Test func aMissingFileIsNoCalibration() throws {
        #expect(try CalibrationFile.load(from: Self.path("missing")) == nil)
    }

    /// A damaged file, or one of another format or version, is a clear error naming it (the caller starts from
    /// zero); saving over it replaces it whole, and leaves no temporary file.
    @Test(arguments: [
        "{\"format\": \"swift-motion calibration\", \"version\": 2, \"state\": {\"truncated",
        "{\"format\": \"swift-motion calibration\", \"version\": 1, \"state\": {}}",
        "{\"format\": \"swift-motion calibration\", \"version\": 99, \"state\": {}}",
        "{\"format\": \"something else\"}", "\u{0}\u{1}binary",
    ])
    func aDamagedFileIsReportedAndReplaced(contents: String) async throws {
        let file = Self.path("damaged")
        try contents.write(toFile: file, atomically: false, encoding: .utf8)
        #expect {
            _ = try CalibrationFile.load(from: file)
        } throws: { error in
            guard let error = error as? MotionError else { return false }
            return error.code == .malformedState && error.location?.file == file
        }
        let manager = try MotionManager(source: .samples(try Self.tumbling(seed: 3), pacing: .asFastAsConsumed))
        for try await _ in manager.deviceMotionUpdates(using: .xArbitraryZVertical, interval: 0) {}
        try CalibrationFile.save(try #require(manager.calibration), to: file)
        #expect(try CalibrationFile.load(from: file) != nil)
        let folder = (file as NSString).deletingLastPathComponent
        let name = (file as NSString).lastPathComponent
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix(".\(name).") }.isEmpty)
    }
}
