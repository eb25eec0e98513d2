import Foundation
import Motion
import MotionAlgorithms
import MotionCore
import MotionTesting
import TestFiles
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The calibration file as input from another process: every value checked, the size bounded, no symbolic link
/// followed, no FIFO waited on, and a state that fails a check never written.
@Suite struct CalibrationFileTests {
    /// A folder of its own, removed after the test.
    final class Folder {
        let path: String
        init() throws { path = try ScratchFolder.folder("calibration-file") }
        deinit { try? FileManager.default.removeItem(atPath: path) }
        func file(_ name: String) -> String { path + "/" + name }
        var names: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }
    }

    /// The state of a filter that ran over 20 s of tumbling with a gyroscope bias and a hard-iron offset, and that
    /// of a filter that saw nothing (with its infinities and NaNs: no fit, no check yet).
    static let learned: DeviceMotionFilter.State = {
        var scenario = Scenario.tumbling(turns: 20)
        scenario.append(.hold(2))
        let options = SimulationOptions(
            rate: 100, sensors: .all, seed: 7, gyroscopeBias: SIMD3(0.01, -0.006, 0.004),
            magnetometerOffset: SIMD3(35, -22, 48))
        var filter = DeviceMotionFilter(referenceFrame: .xMagneticNorthZVertical)
        for sample in try! Simulation(scenario: scenario, options: options) { _ = filter.update(sample) }
        return filter.state
    }()
    static let fresh = DeviceMotionFilter().state

    static func json(_ state: DeviceMotionFilter.State) throws -> [String: Any] {
        let encoder = JSONEncoder()
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        let contents: [String: Any] = [
            "format": "swift-motion calibration", "version": 2,
            "state": try JSONSerialization.jsonObject(with: try encoder.encode(state)),
        ]
        return contents
    }

    /// `contents` with the value at `path` (keys, or indices of arrays) replaced by `value`.
    static func replacing(_ path: [Any], with value: Any, in contents: Any) -> Any {
        guard let first = path.first else { return value }
        let rest = Array(path.dropFirst())
        if let key = first as? String, var dictionary = contents as? [String: Any] {
            dictionary[key] = replacing(rest, with: value, in: dictionary[key] as Any)
            return dictionary
        }
        if let index = first as? Int, var array = contents as? [Any] {
            array[index] = replacing(rest, with: value, in: array[index])
            return array
        }
        Issue.record("no \(first) in \(contents)")
        return contents
    }

    static func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    /// `error` is a `MotionError` of `code` naming `file`, whose message contains each of `parts`.
    static func isError(_ error: any Error, _ code: MotionError.Code, file: String, mentioning parts: [String]) -> Bool {
        guard let error = error as? MotionError, error.code == code, error.location?.file == file else { return false }
        return parts.allSatisfy { error.message.contains($0) }
    }

    @Test("A saved state, learned or fresh (with its infinities and NaNs), reads back and saves again bit for bit")
    func roundTrip() throws {
        let folder = try Folder()
        for (name, state) in [("learned", Self.learned), ("fresh", Self.fresh)] {
            let (first, second) = (folder.file("\(name)-1.json"), folder.file("\(name)-2.json"))
            try CalibrationFile.save(state, to: first)
            let loaded = try #require(try CalibrationFile.load(from: first))
            try CalibrationFile.save(loaded, to: second)
            #expect(try Self.bytes(first) == Self.bytes(second))
            #expect(loaded.gyroscopeBias == state.gyroscopeBias)
            #expect(loaded.magnetometerBias == state.magnetometerBias)
        }
        #expect(Self.learned.magnetometerAccuracy >= .medium)
        #expect(folder.names.allSatisfy { !$0.hasPrefix(".") })  // no temporary file left
    }

    /// A value no filter can hold: non-finite where the filter keeps finite numbers, out of its range, an index
    /// outside its array, a quaternion not of unit length. The file is reported with the field and the value,
    /// ignored, and left as it is.
    @Test(arguments: [
        ("estimator.bias.0", "\"nan\"", "estimator.bias.x is nan"),
        ("estimator.bias.1", "0.5", "estimator.bias.y is 0.5"),
        ("estimator.biasCovariance.c1.1", "\"inf\"", "estimator.biasCovariance.c1.y is inf"),
        ("estimator.biasCovariance.c0.0", "-1.0", "estimator.biasCovariance.c0.x is -1.0"),
        ("estimator.gyroscopeQuaternion.w", "\"nan\"", "estimator.gyroscopeQuaternion.w is nan"),
        ("estimator.inclinationQuaternion.w", "3.0", "estimator.inclinationQuaternion is"),
        ("estimator.lastTimestamp", "\"-inf\"", "estimator.lastTimestamp is -inf"),
        ("estimator.saturationLevel", "\"-inf\"", "estimator.saturationLevel is -inf"),
        ("estimator.ignoredReadings", "-3", "estimator.ignoredReadings is -3"),
        ("estimator.configuration.accelerometerTimeConstant", "0.0", "estimator.configuration.accelerometerTimeConstant is 0.0"),
        ("estimator.configuration.saturationMinimumSamples", "-9223372036854775808", "estimator.configuration.saturationMinimumSamples is"),
        ("estimator.inertialAcceleration.state0.2", "\"nan\"", "estimator.inertialAcceleration.state0.z is nan"),
        ("calibrator.offset.1", "\"-inf\"", "calibrator.offset.y is -inf"),
        ("calibrator.fittedRadius", "\"inf\"", "calibrator.fittedRadius is inf"),
        ("calibrator.pointX.5", "\"nan\"", "calibrator.pointX[5] is nan"),
        ("calibrator.windowNext", "40", "calibrator.windowNext is 40"),
        ("calibrator.windowCount", "1000", "calibrator.windowCount is 1000"),
        ("calibrator.occupiedBins", "-1", "calibrator.occupiedBins is -1"),
        ("calibrator.lastFitTimestamp", "\"inf\"", "calibrator.lastFitTimestamp is inf"),
        ("calibrator.lastRawSpread", "-1.0", "calibrator.lastRawSpread is -1.0"),
        ("magneticDeclination", "\"nan\"", "magneticDeclination is nan"),
        ("predictionInterval", "-1.0", "predictionInterval is -1.0"),
        ("lastAcceleration.0", "\"inf\"", "lastAcceleration.x is inf"),
    ])
    func anInvalidValueIsReportedAndIgnored(field: String, value: String, problem: String) throws {
        let folder = try Folder()
        let file = folder.file("calibration.json")
        // The field's path in the state (numbers index arrays), the value as JSON.
        let path: [Any] = ["state"] + field.split(separator: ".").map { Int($0) ?? String($0) as Any }
        let json = try JSONSerialization.jsonObject(with: Data(value.utf8), options: .fragmentsAllowed)
        let contents = Self.replacing(path, with: json, in: try Self.json(Self.learned))
        try JSONSerialization.data(withJSONObject: contents).write(to: URL(fileURLWithPath: file))
        let before = try Self.bytes(file)
        #expect {
            _ = try CalibrationFile.load(from: file)
        } throws: { error in
            Self.isError(error, .malformedState, file: file, mentioning: [problem])
        }
        #expect(try Self.bytes(file) == before)  // neither removed nor rewritten
    }

    /// The same file with the value it had loads: the edits above are what the checks refuse.
    @Test func theUneditedFileLoads() throws {
        let folder = try Folder()
        let file = folder.file("calibration.json")
        try JSONSerialization.data(withJSONObject: try Self.json(Self.learned)).write(to: URL(fileURLWithPath: file))
        #expect(try CalibrationFile.load(from: file)?.gyroscopeBias == Self.learned.gyroscopeBias)
    }

    /// A state with a NaN (decoded by the caller, unchecked) is never written: the previous file stays whole, and
    /// no temporary file is left.
    @Test func aNaNStateIsNotSaved() throws {
        let folder = try Folder()
        let file = folder.file("calibration.json")
        try CalibrationFile.save(Self.learned, to: file)
        let before = try Self.bytes(file)
        let state = Self.replacing(["estimator", "bias", 2], with: "nan", in: try Self.json(Self.learned)["state"]!)
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        let poisoned = try decoder.decode(
            DeviceMotionFilter.State.self, from: try JSONSerialization.data(withJSONObject: state))
        #expect(poisoned.gyroscopeBias.z.isNaN)
        #expect {
            try CalibrationFile.save(poisoned, to: file)
        } throws: { error in
            Self.isError(error, .invalidArgument, file: file, mentioning: ["estimator.bias.z is nan"])
        }
        #expect(try Self.bytes(file) == before)
        #expect(folder.names == ["calibration.json"])
    }

    /// A 2 GiB file (sparse: no disk used) is refused from its size, before anything is read: the process's peak
    /// memory does not grow by its size.
    @Test func anOversizedFileIsRefusedUnread() throws {
        let folder = try Folder()
        let file = folder.file("calibration.json")
        let fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        try #require(fd >= 0)
        #expect(ftruncate(fd, 2 << 30) == 0)
        close(fd)
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        let peakBefore = usage.ru_maxrss  // KiB
        #expect {
            _ = try CalibrationFile.load(from: file)
        } throws: { error in
            Self.isError(error, .malformedState, file: file, mentioning: ["2147483648 bytes"])
        }
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #expect(usage.ru_maxrss - peakBefore < 512 * 1024, "peak memory grew by \(usage.ru_maxrss - peakBefore) KiB")
    }

    /// A valid calibration padded with spaces (still valid JSON) beyond 1 MiB is refused too.
    @Test func aPaddedValidFileBeyondTheBoundIsRefused() throws {
        let folder = try Folder()
        let file = folder.file("calibration.json")
        var bytes = try JSONSerialization.data(withJSONObject: try Self.json(Self.learned))
        bytes.append(Data(repeating: UInt8(ascii: " "), count: 1 << 20))
        try bytes.write(to: URL(fileURLWithPath: file))
        #expect {
            _ = try CalibrationFile.load(from: file)
        } throws: { error in
            Self.isError(error, .malformedState, file: file, mentioning: ["\(bytes.count) bytes"])
        }
    }

    /// A symbolic link in place of the file is not followed, even to a valid calibration.
    @Test func aSymbolicLinkIsNotFollowed() throws {
        let folder = try Folder()
        let (file, target) = (folder.file("calibration.json"), folder.file("elsewhere.json"))
        try CalibrationFile.save(Self.learned, to: target)
        try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: target)
        #expect {
            _ = try CalibrationFile.load(from: file)
        } throws: { error in
            Self.isError(error, .malformedState, file: file, mentioning: ["symbolic link"])
        }
    }

    /// A FIFO in place of the file is refused at once (no writer is waited for).
    @Test func aFIFOIsRefusedWithoutWaiting() throws {
        let folder = try Folder()
        let file = folder.file("calibration.json")
        try #require(mkfifo(file, 0o600) == 0)
        #expect {
            _ = try CalibrationFile.load(from: file)
        } throws: { error in
            Self.isError(error, .malformedState, file: file, mentioning: ["FIFO"])
        }
    }

    /// A folder in place of the file is refused.
    @Test func aFolderIsRefused() throws {
        let folder = try Folder()
        let file = folder.file("calibration.json")
        try FileManager.default.createDirectory(atPath: file, withIntermediateDirectories: false)
        #expect {
            _ = try CalibrationFile.load(from: file)
        } throws: { error in
            Self.isError(error, .malformedState, file: file, mentioning: ["folder"])
        }
    }

    /// Saving never writes through a symbolic link planted at the temporary name (`O_CREAT | O_EXCL | O_NOFOLLOW`:
    /// another name is used, the link is left as it is) nor at the file's name (the rename replaces the link).
    @Test func savingWritesThroughNoSymbolicLink() throws {
        let folder = try Folder()
        let file = folder.file("calibration.json")
        let victim = folder.file("victim")
        try Data("keep me\n".utf8).write(to: URL(fileURLWithPath: victim))
        let temporary = folder.file(".calibration.json.\(getpid()).partial")
        try FileManager.default.createSymbolicLink(atPath: temporary, withDestinationPath: victim)
        try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: victim)

        try CalibrationFile.save(Self.learned, to: file)
        #expect(String(decoding: try Self.bytes(victim), as: UTF8.self) == "keep me\n")
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        #expect(attributes[.type] as? FileAttributeType == .typeRegular)
        #expect(try CalibrationFile.load(from: file)?.gyroscopeBias == Self.learned.gyroscopeBias)
        // The planted link is still there, untouched; the temporary file used instead is gone.
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: temporary) == victim)
        #expect(folder.names == [".calibration.json.\(getpid()).partial", "calibration.json", "victim"])
    }
}
