import MotionCore
import MotionSystem

#if canImport(Glibc)
import Glibc
#endif

/// The files of a store's directory: `lock` (the writer's `flock`) and the segments, `segment-NNNNNNNNNNNN.msr`
/// in the order they were begun.
enum StoreDirectory {
    static let prefix = "segment-"
    static let suffix = ".msr"
    /// The most segments a directory may hold before a reader refuses it: a million.
    static let maximumSegments = 1_000_000

    struct Segment {
        var sequence: Int
        var path: String
        var size: Int
        /// The last write, in Unix seconds.
        var modified: Double
    }

    static func segmentName(_ sequence: Int) -> String {
        let digits = String(sequence)
        return prefix + String(repeating: "0", count: max(0, 12 - digits.count)) + digits + suffix
    }

    /// The sequence number in a segment's file name, or `nil` when `name` is not one.
    static func sequence(of name: String) -> Int? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { return nil }
        let digits = name.dropFirst(prefix.count).dropLast(suffix.count)
        guard digits.count == 12, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(digits)
    }

    /// Creates `directory` (mode 0700) when it does not exist, and takes its lock; returns the lock's descriptor.
    static func openForWriting(_ directory: String) throws(MotionError) -> Int32 {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            let error = SystemErrno.current()
            throw MotionError(
                error.isPermissionDenied ? .permissionDenied : .ioFailure,
                "cannot create the store's directory: \(error.text); check that its parent exists and is writable",
                at: .init(file: directory), underlying: error)
        }
        var status = stat()
        guard stat(directory, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw MotionError(.invalidArgument, "the store's path is not a directory", at: .init(file: directory))
        }
        let path = directory + "/lock"
        let opened = path.withCString { cPath in
            SystemErrno.retryingInterrupts { open(cPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600) }
        }
        let descriptor: Int32
        switch opened {
        case .success(let fd): descriptor = fd
        case .failure(let error):
            throw MotionError(
                error.isPermissionDenied ? .permissionDenied : .ioFailure,
                "cannot open the store's lock file: \(error.text)", at: .init(file: path), underlying: error)
        }
        if case .failure(let error) = SystemErrno.retryingInterrupts({ flock(descriptor, LOCK_EX | LOCK_NB) }) {
            _ = close(descriptor)
            guard error.isWouldBlock else {
                throw MotionError(
                    .ioFailure, "cannot lock the store: \(error.text)", at: .init(file: path), underlying: error)
            }
            throw MotionError(
                .outputExists, "another process is writing this store; stop it, or give another directory",
                at: .init(file: directory), underlying: error)
        }
        return descriptor
    }

    /// The segments in `directory`, oldest first (by sequence number). Other files are ignored.
    static func segments(in directory: String) throws(MotionError) -> [Segment] {
        guard let stream = opendir(directory) else {
            let error = SystemErrno.current()
            throw MotionError(
                error.isPermissionDenied ? .permissionDenied : (error.isGone ? .noInput : .ioFailure),
                error.isGone ? "there is no store here; give the directory a store was written to"
                    : "cannot list the store's directory: \(error.text)",
                at: .init(file: directory), underlying: error)
        }
        defer { closedir(stream) }
        var segments: [Segment] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard let sequence = sequence(of: name) else { continue }
            guard segments.count < maximumSegments else {
                throw MotionError(
                    .malformedState, "the store holds more than \(maximumSegments) segments; it is not one this "
                        + "library wrote", at: .init(file: directory))
            }
            let path = directory + "/" + name
            var status = stat()
            guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { continue }
            let modified = Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9
            segments.append(Segment(sequence: sequence, path: path, size: Int(status.st_size), modified: modified))
        }
        return segments.sorted { $0.sequence < $1.sequence }
    }

    /// Flushes the directory's entries to the disk (a new or removed segment survives a power loss); best effort.
    static func syncDirectory(_ directory: String) {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        _ = close(descriptor)
    }
}
