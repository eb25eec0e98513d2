import MotionCore
import MotionSystem
import MotionTrace

#if canImport(Glibc)
import Glibc
#endif

/// Opens the trace of a trace command: a file as it is; stdin (`--trace -`) that is not a regular file (a pipe, a
/// terminal), or a named pipe given by its path, through ``StandardInputPump``, so that SIGINT or SIGTERM ends the
/// command at once even while no input comes (or, for a named pipe, before any writer has opened it). Interrupted
/// before the trace's header arrived: `cancelled` (status 0, nothing printed).
func openTrace(_ path: String, lenient: Bool) throws(MotionError) -> TraceReader {
    var info = stat()
    let input: (descriptor: Int32, name: String)
    if path == "-" {
        guard fstat(0, &info) == 0, info.st_mode & S_IFMT != S_IFREG else {
            return try TraceReader(path: path, options: .init(lenient: lenient))
        }
        input = (0, "<stdin>")
    } else {
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFIFO else {
            return try TraceReader(path: path, options: .init(lenient: lenient))
        }
        // Without O_NONBLOCK the open would wait for a writer, deaf to signals; the pump polls before it reads,
        // and a FIFO that no writer has opened yet is not readable (no end of input before a writer came and went).
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let error = systemError(errno)
            throw MotionError(
                error.isPermissionDenied ? .permissionDenied : .ioFailure, "cannot open the named pipe \(path)",
                at: .init(file: path), underlying: error)
        }
        input = (descriptor, path)
    }
    let pump = try StandardInputPump(input: input.descriptor, name: input.name)
    do {
        return try TraceReader(fileDescriptor: pump.output, name: input.name, options: .init(lenient: lenient))
    } catch where Interruption.isRequested {
        throw MotionError(.cancelled, "interrupted before the trace's header arrived")
    }
}

/// Copies stdin (or a named pipe), whole lines at a time, to a pipe the trace reader reads, on a thread of its own
/// that waits in `poll` on its input and on ``Interruption/wakeDescriptor``: at SIGINT or SIGTERM it closes the pipe at once, so the
/// reader sees the end of its input however long stdin stays idle; a partial line read so far is dropped (at the
/// end of stdin it is passed on, for the reader to report as truncated). The pipe's read end lives as long as the
/// process.
final class StandardInputPump: @unchecked Sendable {
    /// The read end, for the trace reader.
    let output: Int32
    private let input: Int32
    /// The input's name in messages: `<stdin>` or the named pipe's path.
    private let name: String
    private let writeEnd: Int32

    init(input: Int32, name: String) throws(MotionError) {
        self.input = input
        self.name = name
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            throw MotionError(.ioFailure, "cannot create a pipe for \(name)", underlying: systemError(errno))
        }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)  // a full pipe must not keep the pump from seeing a signal
        (output, writeEnd) = (fds[0], fds[1])
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let status = pthread_create(&thread, nil, { context in
            let pump = Unmanaged<StandardInputPump>.fromOpaque(context!).takeRetainedValue()
            pump.run()
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<StandardInputPump>.fromOpaque(context).release()
            throw MotionError(.ioFailure, "cannot start the thread that reads \(name)", underlying: systemError(status))
        }
        pthread_detach(thread)
    }

    private func run() {
        defer { close(writeEnd) }
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            guard waitFor(input, events: POLLIN) else { return }  // a signal
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                printToStandardError("motionctl: error: reading \(name) failed: \(systemError(errno))")
                return
            }
            if count == 0 {  // the end of the input: the rest as it is
                _ = writeAll(pending[...])
                return
            }
            pending += buffer[..<count]
            if let newline = pending.lastIndex(of: UInt8(ascii: "\n")) {
                guard writeAll(pending[...newline]) else { return }
                pending.removeFirst(newline + 1)
            }
        }
    }

    /// Writes `bytes` to the pipe, waiting while it is full; `false` when a signal came first (or the reader went).
    private func writeAll(_ bytes: ArraySlice<UInt8>) -> Bool {
        var rest = bytes
        while !rest.isEmpty {
            let count = rest.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) }
            if count > 0 {
                rest = rest.dropFirst(count)
            } else if count < 0 && (errno == EAGAIN || errno == EINTR) {
                guard waitFor(writeEnd, events: POLLOUT) else { return false }
            } else {
                return false
            }
        }
        return true
    }

    /// Waits until `fd` is ready for `events` (`true`) or a signal has arrived (`false`).
    private func waitFor(_ fd: Int32, events: Int32) -> Bool {
        while !Interruption.isRequested {
            var fds = [
                pollfd(fd: fd, events: Int16(events), revents: 0),
                pollfd(fd: Interruption.wakeDescriptor, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, -1)
            if ready < 0 && errno == EINTR { continue }
            if fds[1].revents != 0 { return false }
            return true  // ready, or an error or hang-up the read or write then reports
        }
        return false
    }
}
