public import MotionAlgorithms
public import MotionCore
import Foundation
import MotionTrace

/// A calibration (``MotionManager/calibration``: gyroscope bias and its uncertainty, magnetometer calibration)
/// kept in a file so that it survives restarts, as a service keeps it in its state directory.
///
/// The file is JSON: `{"format": "swift-motion calibration", "version": 2, "state": {…}}`, the state being
/// `DeviceMotionFilter.State`'s own encoding (infinities as the strings `inf`, `-inf`). Version 2: the estimator's
/// state holds the magnetometer readings averaged since its last heading correction, and its settings
/// `magnetometerUpdateInterval`; the calibrator's, which of its trust window's readings were disturbed.
public enum CalibrationFile {
    static let format = "swift-motion calibration"
    static let version = 2

    private struct Contents: Codable {
        var format: String
        var version: Int
        var state: DeviceMotionFilter.State
    }

    private struct Header: Decodable {
        var format: String?
        var version: Int?
    }

    /// Saves `calibration` at `path`, atomically (`TraceOutputFile`): written to a temporary file beside it
    /// (`.NAME.PID.partial`), flushed to the disk, then renamed over it, and the folder flushed. A crash at any
    /// moment leaves the previous file or the new one, whole; a failure removes the temporary file and leaves the
    /// previous file as it was.
    /// - Throws: `MotionError` (`permissionDenied`, `ioFailure`) naming the file.
    public static func save(_ calibration: DeviceMotionFilter.State, to path: String) throws(MotionError) {
        let data: Data
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            encoder.nonConformingFloatEncodingStrategy = .convertToString(
                positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")  // the state holds some infinities
            data = try encoder.encode(Contents(format: format, version: version, state: calibration))
        } catch {
            throw MotionError(.invalidArgument, "the calibration cannot be encoded: \(error)", underlying: error)
        }
        // Beside the path, then renamed over it, flushed to the disk (TraceOutputFile).
        let file = try TraceOutputFile(path: path, existing: .replace)
        defer { file.close() }
        try TextOutput.write(String(decoding: data, as: UTF8.self) + "\n", to: file.fileDescriptor, name: path)
        try file.commit()
    }

    /// The calibration saved at `path`, or `nil` when there is no file there.
    /// - Throws: `MotionError.Code.malformedState` naming the file when it is damaged or of another format or
    ///   version (start from zero, and report it: the next save replaces it); `permissionDenied` or `ioFailure`
    ///   when it cannot be read.
    public static func load(from path: String) throws(MotionError) -> DeviceMotionFilter.State? {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return nil
        } catch let error as CocoaError where error.code == .fileReadNoPermission {
            throw MotionError(
                .permissionDenied, "cannot read the calibration: permission denied; check the file's mode and owner",
                at: .init(file: path), underlying: error)
        } catch {
            throw MotionError(.ioFailure, "cannot read the calibration: \(error)", at: .init(file: path), underlying: error)
        }
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        guard let header = try? decoder.decode(Header.self, from: data), header.format == format else {
            throw MotionError(
                .malformedState, "not a swift-motion calibration file (damaged?); it is ignored and replaced at the next save",
                at: .init(file: path))
        }
        guard header.version == version else {
            throw MotionError(
                .malformedState,
                "a calibration file of version \(header.version.map(String.init) ?? "?"), this build reads version "
                    + "\(version); it is ignored and replaced at the next save", at: .init(file: path))
        }
        do {
            return try decoder.decode(Contents.self, from: data).state
        } catch {
            throw MotionError(
                .malformedState, "a damaged calibration file (\(error)); it is ignored and replaced at the next save",
                at: .init(file: path), underlying: error)
        }
    }
}
