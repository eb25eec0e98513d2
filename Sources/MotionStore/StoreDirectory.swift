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

    /// Why a segment could not be read.
    enum ReadFailure: Error {
        /// Removed since it was listed (retention, an acknowledged spool segment).
        case gone
        /// A link, a FIFO, a directory: not a file this library wrote.
        case notRegular
        /// Larger than the largest segment (its size in bytes).
        case tooLarge(Int)
        case system(SystemErrno)
    }

    /// The segment file at `path` from byte `offset` to its end as it is now (its writer may be appending), read as
    /// hostile input: never through a link, never from anything but a regular file, never more than the largest
    /// segment.
    static func read(_ path: String, from offset: Int = 0) -> Result<[UInt8], ReadFailure> {
        let opened = path.withCString { cPath in
            SystemErrno.retryingInterrupts { open(cPath, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY) }
        }
        let descriptor: Int32
        switch opened {
        case .success(let fd): descriptor = fd
        case .failure(let error) where error.isGone: return .failure(.gone)
        case .failure(.symbolicLinkLoop): return .failure(.notRegular)
        case .failure(let error): return .failure(.system(error))
        }
        defer { _ = close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return .failure(.system(.current())) }
        guard status.st_mode & S_IFMT == S_IFREG else { return .failure(.notRegular) }
        let limit = MotionStore.Configuration.largestSegment
        guard Int(status.st_size) <= limit else { return .failure(.tooLarge(Int(status.st_size))) }
        guard Int(status.st_size) > offset else { return .success([]) }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size) - offset + 65_536)
        var count = 0
        while true {
            if count == bytes.count {
                guard offset + bytes.count < limit else { return .failure(.tooLarge(offset + bytes.count)) }
                bytes += [UInt8](repeating: 0, count: min(bytes.count, limit - offset - bytes.count))
            }
            let result = bytes.withUnsafeMutableBytes { buffer in
                SystemErrno.retryingInterrupts {
                    pread(descriptor, buffer.baseAddress! + count, buffer.count - count, off_t(offset + count))
                }
            }
            switch result {
            case .success(0):
                bytes.removeSubrange(count...)
                return .success(bytes)
            case .success(let read): count += read
            case .failure(let error): return .failure(.system(error))
            }
        }
    }
}
