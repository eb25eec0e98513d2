public import MotionAlgorithms
public import MotionCore
import Foundation
import MotionSystem
import MotionTrace

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A calibration (``MotionManager/calibration``: gyroscope bias and its uncertainty, magnetometer calibration)
/// kept in a file so that it survives restarts, as a service keeps it in its state directory.
///
/// The file is JSON: `{"format": "swift-motion calibration", "version": 2, "state": {…}}`, the state being
/// `DeviceMotionFilter.State`'s own encoding (infinities as the strings `inf`, `-inf`). Version 2: the estimator's
/// state holds the magnetometer readings averaged since its last heading correction, and its settings
/// `magnetometerUpdateInterval`; the calibrator's, which of its trust window's readings were disturbed.
///
/// The file is read as input from another process: at most 1 MiB, only a regular file (not
/// through a symbolic link, and never waiting on a FIFO), and every value of the state checked by its meaning
/// before it is used. A state that fails a check is never saved either.
public enum CalibrationFile {
    static let format = "swift-motion calibration"
    static let version = 2
    /// The largest file read, 1 MiB: a calibration takes about 11 KB (the calibrator's points and trust window are
    /// 7 × 32 numbers, the rest about 150), so this leaves room for later versions while a larger file, damaged or
    /// planted, is refused before it is read (the whole file is held in memory to decode it).
    package static let maximumSize = 1 << 20

    private struct Contents: Codable {
        var format: String
        var version: Int
        var state: DeviceMotionFilter.State
    }

    private struct Header: Decodable {
        var format: String?
        var version: Int?
    }

    /// Saves `calibration` at `path`, atomically (`TraceOutputFile`): written to a new temporary file beside it
    /// (`.NAME.PID.partial`, created with `O_CREAT | O_EXCL | O_NOFOLLOW`, so never a file or symbolic link already
    /// there), flushed to the disk, then renamed over it (a symbolic link at `path` is replaced, not followed), and
    /// the folder flushed. A crash at any moment leaves the previous file or the new one, whole; a failure removes
    /// the temporary file and leaves the previous file as it was.
    /// - Throws: `MotionError` (`permissionDenied`, `ioFailure`) naming the file; `invalidArgument` when a value of
    ///   the state is out of its range (non-finite, say): nothing is written, and the previous file stays.
    public static func save(_ calibration: DeviceMotionFilter.State, to path: String) throws(MotionError) {
        let data = try encode(calibration, for: path)
        let file = try TraceOutputFile(path: path, existing: .replace)
        defer { file.close() }
        try TextOutput.write(String(decoding: data, as: UTF8.self) + "\n", to: file.fileDescriptor, name: path)
        try file.commit()
    }

    /// The calibration saved at `path`, or `nil` when there is no file there.
    ///
    /// A file that is refused is left as it is (not removed, not rewritten) until the next ``save(_:to:)``
    /// replaces it: it can be looked at meanwhile.
    /// - Throws: `MotionError.Code.malformedState` naming the file and what is wrong with it (start from zero, and
    ///   report it): damaged, of another format or version, a value out of its range (the field and its value),
    ///   larger than 1 MiB, or not a regular file (a symbolic link, a FIFO, a device, a folder);
    ///   `permissionDenied` or `ioFailure` when it cannot be read.
    public static func load(from path: String) throws(MotionError) -> DeviceMotionFilter.State? {
        guard let bytes = try contents(of: path) else { return nil }
        return try decode(bytes, from: path)
    }

    /// The file's bytes, read as another process's input: opened with `O_NOFOLLOW` (a symbolic link is refused) and
    /// `O_NONBLOCK` (a FIFO does not wait for a writer), taken only if `fstat` says it is a regular file of at most
    /// `maximumSize` bytes, and read to at most that many (a file that grows meanwhile is refused). `nil` when
    /// there is no file.
    package static func contents(of path: String) throws(MotionError) -> [UInt8]? {
        let opened = path.withCString { cPath in
            SystemErrno.retryingInterrupts { open(cPath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY) }
        }
        let fd: Int32
        switch opened {
        case .success(let descriptor):
            fd = descriptor
        case .failure(.noSuchFile):
            return nil
        case .failure(let error) where SystemErrno.symbolicLinkLoop ~= error:
            throw malformed(path, "it is a symbolic link, which is not followed", underlying: error)
        case .failure(let error) where error.isPermissionDenied:
            throw MotionError(
                .permissionDenied, "cannot read the calibration: permission denied; check the file's mode and owner",
                at: .init(file: path), underlying: error)
        case .failure(let error):
            throw MotionError(.ioFailure, "cannot read the calibration: \(error.text)", at: .init(file: path), underlying: error)
        }
        defer { _ = close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            let error = SystemErrno.current()
            throw MotionError(.ioFailure, "cannot read the calibration: \(error.text)", at: .init(file: path), underlying: error)
        }
        let type = status.st_mode & S_IFMT
        guard type == S_IFREG else {
            let kind = switch type {
            case S_IFIFO: "a FIFO"
            case S_IFCHR: "a character device"
            case S_IFBLK: "a block device"
            case S_IFDIR: "a folder"
            case S_IFSOCK: "a socket"
            default: "not a file"
            }
            throw malformed(path, "it is \(kind), not a regular file")
        }
        guard status.st_size <= maximumSize else {
            throw malformed(path, "it holds \(status.st_size) bytes, more than a calibration's \(maximumSize)")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(status.st_size))
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let wanted = min(chunk.count, maximumSize + 1 - bytes.count)
            let result = chunk.withUnsafeMutableBytes { buffer in
                SystemErrno.retryingInterrupts { read(fd, buffer.baseAddress, wanted) }
            }
            switch result {
            case .success(0):
                return bytes
            case .success(let count):
                bytes.append(contentsOf: chunk[0..<count])
                if bytes.count > maximumSize {
                    throw malformed(path, "it grew beyond a calibration's \(maximumSize) bytes while being read")
                }
            case .failure(let error):
                throw MotionError(
                    .ioFailure, "cannot read the calibration: \(error.text)", at: .init(file: path), underlying: error)
            }
        }
    }

    /// The state in a file's bytes (`name` names the file in errors), decoded and checked field by field
    /// (`DeviceMotionFilter.State.validate()`).
    /// - Throws: `MotionError.Code.malformedState` naming the file and what is wrong.
    package static func decode(_ bytes: [UInt8], from name: String) throws(MotionError) -> DeviceMotionFilter.State {
        let data = Data(bytes)
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        guard let header = try? decoder.decode(Header.self, from: data), header.format == format else {
            throw malformed(name, "it is not a swift-motion calibration file (damaged?)")
        }
        guard header.version == version else {
            throw malformed(
                name,
                "it is a calibration file of version \(header.version.map(String.init) ?? "?"), this build reads version "
                    + "\(version)")
        }
        let state: DeviceMotionFilter.State
        do {
            state = try decoder.decode(Contents.self, from: data).state
        } catch {
            throw malformed(name, "it is damaged (\(error))", underlying: error)
        }
        do {
            try state.validate()
        } catch {
            throw malformed(name, "its \(error)", underlying: error)
        }
        return state
    }

    /// The file's bytes for `state` (without the final newline), once every value is checked.
    /// - Throws: `MotionError.Code.invalidArgument` naming `name` when a value is out of its range.
    package static func encode(_ state: DeviceMotionFilter.State, for name: String) throws(MotionError) -> [UInt8] {
        do {
            try state.validate()
        } catch {
            throw MotionError(
                .invalidArgument, "the calibration is not saved: its \(error); the file keeps what it held",
                at: .init(file: name), underlying: error)
        }
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            encoder.nonConformingFloatEncodingStrategy = .convertToString(
                positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")  // the state holds some infinities
            return [UInt8](try encoder.encode(Contents(format: format, version: version, state: state)))
        } catch {
            throw MotionError(
                .invalidArgument, "the calibration cannot be encoded: \(error)", at: .init(file: name), underlying: error)
        }
    }

    private static func malformed(_ path: String, _ problem: String, underlying: (any Error & Sendable)? = nil) -> MotionError {
        MotionError(
            .malformedState,
            "the calibration is ignored: \(problem); the file is kept as it is until the next save replaces it",
            at: .init(file: path), underlying: underlying)
    }
}
