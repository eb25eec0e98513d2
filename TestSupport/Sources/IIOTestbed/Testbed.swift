internal import CUMockdev
internal import UMockdevPreload
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// An in-process umockdev testbed: emulated sysfs devices, udev properties, uevents and `/dev` nodes that the
/// real libudev and libiio code of this process (and of child processes it starts) sees instead of the
/// machine's.
///
/// Test support only. umockdev keeps one testbed per process (`$UMOCKDEV_DIR` is process-global), so tests
/// get the testbed through ``run(_:)``, which holds a process-wide lock for the duration and starts from an
/// empty testbed: tests in different suites and targets never share or hide each other's devices.
///
/// The testbed is created once and then only cleared, never freed: creating and freeing one sets and unsets
/// `UMOCKDEV_DIR`, and changing the environment while other threads read it (umockdev's own threads, the test
/// runner) crashes at random. Its folder is removed when the process exits.
///
/// The emulation works only when `libumockdev-preload.so.0` was in `LD_PRELOAD` when the process started. The
/// `UMockdevPreload` target's constructor arranges that by re-executing the test binary once; see
/// `Docs/Devices.md` ("Testing").
public final class Testbed: @unchecked Sendable {
    private let testbed: UnsafeMutablePointer<UMockdevTestbed>
    /// The sysfs paths of the devices added, for removal after the test (the lock makes this single-threaded).
    private var added: [String] = []
    /// Attribute files made read-only by ``makeReadOnly(_:_:)`` (testbed paths).
    private var readOnly: [String] = []
    /// A `/dev` node this testbed made.
    private struct NodeFiles {
        /// The name under `/dev`, such as `iio:device0`.
        var name: String
        /// The node's path in the testbed.
        var path: String
        /// What ``feed(_:_:scanSize:)`` writes to: the pty's master or the FIFO's write end; -1 for a plain file.
        var writer: Int32 = -1
        /// The pty's slave, kept open so the pty stays in raw mode; -1 for other nodes.
        var ptySlave: Int32 = -1
        var isFIFO = false
    }

    /// The `/dev` nodes this testbed made, by sysfs path.
    private var nodes: [String: NodeFiles] = [:]

    /// `true` when umockdev's preload library is mapped into this process, so testbeds redirect `/sys` and `/dev`.
    public static var preloadActive: Bool { swift_motion_umockdev_preload_active() != 0 }

    /// `true` under CI (`CI` is set and not `false`/`0`): emulated-device tests must then run, and fail
    /// when the preload is not active instead of being skipped.
    public static var isRequired: Bool {
        guard let value = getenv("CI").map({ String(cString: $0) }) else { return false }
        return !["", "0", "false", "FALSE", "False"].contains(value)
    }

    /// Whether emulated-device tests should run: the preload is active, or CI requires them (they then fail
    /// with an explanation). Tests use `.requires(.umockdevPreload)` (``Prerequisite``), which also says what
    /// is missing; this remains for opt-in suites that add their own condition.
    public static var isEnabled: Bool { preloadActive || isRequired }

    /// Why the preload is not active, with the fixes.
    public static let preloadHelp = """
        umockdev's preload library is not active in the test process, so emulated IIO devices cannot work. \
        Install umockdev and libumockdev-dev (.ci/run does), and run `swift test` without UMOCKDEV_NO_REEXEC, \
        or run `UMOCKDEV_NO_REEXEC=1 umockdev-wrapper swift test`.
        """

    private init() throws(TestbedError) {
        guard Testbed.preloadActive else { throw TestbedError(Testbed.preloadHelp) }
        guard let testbed = umockdev_testbed_new() else { throw TestbedError("umockdev_testbed_new failed") }
        self.testbed = testbed
        let root = umockdev_testbed_get_root_dir(testbed)
        swift_motion_remove_at_exit(root)
        g_free(root)
    }

    /// The one testbed of the process; only touched while holding the lock.
    nonisolated(unsafe) private static var shared: Testbed?

    /// Runs `body` with an empty testbed, holding the process-wide testbed lock throughout; the testbed is
    /// cleared again afterwards.
    ///
    /// - Throws: ``TestbedError`` when the preload is not active (see ``preloadHelp``), or what `body` throws.
    public static func run<Result: Sendable>(
        _ body: (Testbed) async throws -> Result
    ) async throws -> Result {
        await TestbedLock.shared.acquire()
        defer { TestbedLock.shared.release() }
        if shared == nil { shared = try Testbed() }
        let testbed = shared!
        defer { testbed.removeAll() }
        return try await body(testbed)
    }

    /// The testbed's root folder (`$UMOCKDEV_DIR`), which holds `sys/` and `dev/`.
    public var rootDirectory: String {
        let pointer = umockdev_testbed_get_root_dir(testbed)
        defer { g_free(pointer) }
        return pointer.map { String(cString: $0) } ?? ""
    }

    /// Adds a device (and sends its `add` uevent) and returns its sysfs path, such as
    /// `/sys/devices/platform/lis3dh-accel/iio:device0`.
    ///
    /// The `/dev` node is made here rather than by umockdev (whose pty nodes cannot be made again under the
    /// same name once removed): a plain file holding the bytes, a symbolic link to a pty in raw mode whose
    /// master side ``feed(_:_:scanSize:)`` writes to, or a named pipe (FIFO) that it writes to. Removing the device
    /// closes the pty, so readers see it vanish (a FIFO's readers do not: see ``EmulatedDevice/Node/fifo``).
    @discardableResult
    public func add(_ device: EmulatedDevice) throws(TestbedError) -> String {
        var description = device
        let node = description.node
        description.node = nil
        if let node { try makeNode(node.name, node.backing, for: device.sysfsPath) }
        try add(description: description.umockdevDescription)
        return device.sysfsPath
    }

    private func makeNode(_ name: String, _ backing: EmulatedDevice.Node, for sysfsPath: String) throws(TestbedError) {
        let directory = rootDirectory + "/dev"
        mkdir(directory, 0o755)
        let path = directory + "/" + name
        unlink(path)
        switch backing {
        case .file(let bytes):
            guard let file = fopen(path, "w") else { throw TestbedError("cannot create \(path): errno \(errno)") }
            _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
            fclose(file)
            nodes[sysfsPath] = NodeFiles(name: name, path: path)
        case .fifo:
            guard mkfifo(path, 0o644) == 0 else { throw TestbedError("cannot make the FIFO \(path): errno \(errno)") }
            // Read-write, as libiio opens the node: opening never waits for the other side, and the pipe stays
            // open (empty reads give EAGAIN, never an end of file) whoever comes and goes.
            let writer = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
            guard writer >= 0 else {
                let code = errno
                unlink(path)
                throw TestbedError("cannot open the FIFO \(path): errno \(code)")
            }
            nodes[sysfsPath] = NodeFiles(name: name, path: path, writer: writer, isFIFO: true)
        case .pty:
            var master: Int32 = -1
            var slave: Int32 = -1
            guard openpty(&master, &slave, nil, nil, nil) == 0 else {
                throw TestbedError("openpty failed: errno \(errno)")
            }
            var settings = termios()
            tcgetattr(slave, &settings)
            cfmakeraw(&settings)
            tcsetattr(slave, TCSANOW, &settings)
            let flags = fcntl(master, F_GETFL)
            _ = fcntl(master, F_SETFL, flags | O_NONBLOCK)
            guard let slaveName = ttyname(slave).map({ String(cString: $0) }), symlink(slaveName, path) == 0 else {
                close(master)
                close(slave)
                throw TestbedError("cannot link \(path) to a pty: errno \(errno)")
            }
            nodes[sysfsPath] = NodeFiles(name: name, path: path, writer: master, ptySlave: slave)
        }
    }

    private func removeNode(for sysfsPath: String) {
        guard let node = nodes.removeValue(forKey: sysfsPath) else { return }
        unlink(node.path)
        if node.writer >= 0 { close(node.writer) }
        if node.ptySlave >= 0 { close(node.ptySlave) }
    }

    /// Adds devices from umockdev's text format (`P:`, `N:`, `E:`, `A:` lines; blank lines between devices).
    public func add(description: String) throws(TestbedError) {
        for line in description.split(separator: "\n") where line.hasPrefix("P: ") {
            added.append("/sys" + line.dropFirst(3))
        }
        var error: UnsafeMutablePointer<GError>?
        let ok = umockdev_testbed_add_from_string(testbed, description, &error)
        if ok == 0 {
            let message = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
            if let error { g_error_free(error) }
            throw TestbedError("umockdev could not add the device: \(message)")
        }
    }

    /// Sets a sysfs attribute of the device at `sysfsPath`; `value` gets the trailing newline sysfs values have.
    public func setAttribute(_ sysfsPath: String, _ name: String, _ value: String) {
        umockdev_testbed_set_attribute(testbed, sysfsPath, name, value.hasSuffix("\n") ? value : value + "\n")
    }

    /// Sets a udev property of the device at `sysfsPath`.
    public func setProperty(_ sysfsPath: String, _ name: String, _ value: String) {
        umockdev_testbed_set_property(testbed, sysfsPath, name, value)
    }

    /// Makes a sysfs attribute of the device at `sysfsPath` read-only for this process, as a kernel attribute
    /// without a store method is: mode 0444 and, since root ignores modes, the immutable flag (`chattr +i`;
    /// needs `CAP_LINUX_IMMUTABLE` and a file system that has it, such as ext4 or tmpfs). Cleared when the device
    /// is removed.
    ///
    /// - Throws: ``TestbedError`` when the file stays writable.
    public func makeReadOnly(_ sysfsPath: String, _ name: String) throws(TestbedError) {
        let path = rootDirectory + sysfsPath + "/" + name
        guard chmod(path, 0o444) == 0 else { throw TestbedError("cannot chmod \(path): errno \(errno)") }
        if geteuid() == 0 { setImmutable(path, true) }
        readOnly.append(path)
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        if fd >= 0 {
            close(fd)
            throw TestbedError(
                "\(path) stays writable: as root this needs CAP_LINUX_IMMUTABLE and a file system with chattr +i")
        }
    }

    /// Sets or clears `FS_IMMUTABLE_FL` (`FS_IOC_GETFLAGS`/`FS_IOC_SETFLAGS`, linux/fs.h); `false` when refused.
    @discardableResult
    private func setImmutable(_ path: String, _ on: Bool) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let getFlags: UInt = 0x8008_6601  // _IOR('f', 1, long)
        let setFlags: UInt = 0x4008_6602  // _IOW('f', 2, long)
        let immutable = 0x10  // FS_IMMUTABLE_FL
        var flags = 0
        guard ioctl(fd, getFlags, &flags) == 0 else { return false }
        flags = on ? flags | immutable : flags & ~immutable
        return ioctl(fd, setFlags, &flags) == 0
    }

    /// Makes the read-only attributes under `sysfsPath` (all when `nil`) writable again, so they can be removed.
    private func clearReadOnly(under sysfsPath: String? = nil) {
        let prefix = sysfsPath.map { rootDirectory + $0 + "/" }
        for path in readOnly where prefix.map({ path.hasPrefix($0) }) ?? true {
            if geteuid() == 0 { setImmutable(path, false) }
            chmod(path, 0o644)
        }
        readOnly.removeAll { path in prefix.map { path.hasPrefix($0) } ?? true }
    }

    /// Sends a uevent (`add`, `change`, `remove`) for the device at `sysfsPath` to libudev monitors.
    public func uevent(_ sysfsPath: String, _ action: String) {
        umockdev_testbed_uevent(testbed, sysfsPath, action)
    }

    /// Sends the `remove` uevent, then removes the device (umockdev's removal alone sends no uevent).
    public func remove(_ sysfsPath: String) {
        uevent(sysfsPath, "remove")
        removeNode(for: sysfsPath)
        clearReadOnly(under: sysfsPath)
        umockdev_testbed_remove_device(testbed, sysfsPath)
        added.removeAll { $0 == sysfsPath }
    }

    /// Removes every device still there (no uevents), so the next test starts from an empty testbed.
    private func removeAll() {
        clearReadOnly()
        for path in added.reversed() {
            removeNode(for: path)
            umockdev_testbed_remove_device(testbed, path)
        }
        added = []
    }

    /// What the test writes to for an emulated `/dev` node such as `/dev/iio:device0`: the master side of its pty
    /// (``EmulatedDevice/Node/pty``) or the write end of its FIFO (``EmulatedDevice/Node/fifo``); bytes written to
    /// it are what readers of the node receive. -1 when there is none (a plain file, or no such node).
    public func masterFileDescriptor(forNode node: String) -> Int32 {
        nodes.values.first { "/dev/" + $0.name == node }?.writer ?? -1
    }

    /// Puts the pty behind `node` (such as `/dev/iio:device0`) in exclusive mode (`TIOCEXCL`): opening it then
    /// fails with `EBUSY` for a process without `CAP_SYS_ADMIN`, as an IIO node does while another program (such
    /// as iio-sensor-proxy) reads its buffer.
    public func makeBusy(_ node: String) throws(TestbedError) {
        guard let files = nodes.values.first(where: { "/dev/" + $0.name == node }), files.ptySlave >= 0 else {
            throw TestbedError("\(node) has no pty (add it with a .pty node)")
        }
        guard ioctl(files.ptySlave, UInt(TIOCEXCL)) == 0 else { throw TestbedError("TIOCEXCL failed: errno \(errno)") }
    }

    /// Writes all of `bytes` to `node` (see ``masterFileDescriptor(forNode:)``), waiting while the node is full.
    ///
    /// A FIFO gets them in writes of at most `PIPE_BUF` (4096) bytes that end on a multiple of `scanSize`, so that
    /// each arrives whole, as a kernel buffer hands over whole scans: write one batch per call to wake a reader
    /// once per batch. (A write larger than `PIPE_BUF` could reach the reader in pieces split anywhere.) A pty
    /// gets them as they fit.
    ///
    /// While the node is full (nobody reads it), the write waits, at most `timeout` seconds in all when given
    /// (then it throws, with what was written so far written), else for ever.
    public func feed(_ node: String, _ bytes: [UInt8], scanSize: Int = 1, timeout: Double? = nil) throws(TestbedError) {
        let deadline = timeout.map { Date().addingTimeInterval($0) }
        guard let files = nodes.values.first(where: { "/dev/" + $0.name == node }), files.writer >= 0 else {
            throw TestbedError("\(node) has no pty or FIFO (add it with a .pty or .fifo node)")
        }
        let fd = files.writer
        let pipeBuffer = 4096  // PIPE_BUF: a write of at most this many bytes to a pipe is atomic
        let piece = files.isFIFO ? max(scanSize, pipeBuffer / max(scanSize, 1) * max(scanSize, 1)) : bytes.count
        var done = 0
        while done < bytes.count {
            let count = min(piece, bytes.count - done)
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + done, count) }
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN {
                    if let deadline, Date() >= deadline {
                        throw TestbedError("\(node) is full: nobody read \(bytes.count - done) bytes in time")
                    }
                    var request = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&request, 1, deadline == nil ? 1000 : 50)
                    continue
                }
                throw TestbedError("writing to \(node) failed: errno \(errno)")
            }
            done += written
        }
    }

    /// The current contents of a sysfs attribute file, without trailing newlines and NUL bytes, or `nil` when
    /// missing.
    /// Reads the testbed's file directly (not through the preload), so it sees what libraries wrote.
    public func attribute(_ sysfsPath: String, _ name: String) -> String? {
        let path = rootDirectory + sysfsPath + "/" + name
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        // Real sysfs values end in a newline; libiio writes "1\0" (it counts the terminator), which sysfs ignores.
        while let last = bytes.last, last == UInt8(ascii: "\n") || last == 0 { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A testbed failure, with an explanation.
public struct TestbedError: Error, CustomStringConvertible, Sendable {
    /// What went wrong and how to fix it.
    public var description: String

    /// Creates an error.
    public init(_ description: String) { self.description = description }
}

/// A process-wide async lock: one testbed at a time, without blocking a thread while waiting.
final class TestbedLock: @unchecked Sendable {
    static let shared = TestbedLock()

    private struct State {
        var busy = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    /// `NSLock` (a pthread mutex, which ThreadSanitizer understands) guards `state`: hence `@unchecked`.
    private let lock = NSLock()
    private var state = State()

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = lock.withLock {
                if state.busy {
                    state.waiters.append(continuation)
                    return false
                }
                state.busy = true
                return true
            }
            if acquired { continuation.resume() }
        }
    }

    func release() {
        let next = lock.withLock {
            if state.waiters.isEmpty {
                state.busy = false
                return nil as CheckedContinuation<Void, Never>?
            }
            return state.waiters.removeFirst()  // ownership passes to the next waiter
        }
        next?.resume()
    }
}

