internal import CUMockdev
internal import UMockdevPreload
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An in-process umockdev testbed: emulated sysfs devices, udev properties, uevents and `/dev` nodes that the
/// real libudev and libiio code of this process (and of child processes it starts) sees instead of the
/// machine's.
///
/// Test support only. umockdev keeps one testbed per process (`$UMOCKDEV_DIR` is process-global), so tests
/// get one through ``run(_:)``, which holds a process-wide lock for the duration: tests in different suites
/// and targets never share or hide each other's devices.
///
/// The emulation works only when `libumockdev-preload.so.0` was in `LD_PRELOAD` when the process started. The
/// `UMockdevPreload` target's constructor arranges that by re-executing the test binary once; see
/// `Docs/Devices.md` ("Testing").
public final class Testbed: @unchecked Sendable {
    private let testbed: UnsafeMutablePointer<UMockdevTestbed>

    /// `true` when umockdev's preload library is mapped into this process, so testbeds redirect `/sys` and `/dev`.
    public static var preloadActive: Bool { swift_motion_umockdev_preload_active() != 0 }

    /// `true` under CI (`CI` is set and not `false`/`0`): emulated-device tests must then run, and fail
    /// when the preload is not active instead of being skipped.
    public static var isRequired: Bool {
        guard let value = getenv("CI").map({ String(cString: $0) }) else { return false }
        return !["", "0", "false", "FALSE", "False"].contains(value)
    }

    /// Whether emulated-device tests should run: the preload is active, or CI requires them (they then fail
    /// with an explanation). Use as `.enabled(if: Testbed.isEnabled)`.
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
    }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(testbed))
    }

    /// Creates a testbed, runs `body` with it and frees it, holding the process-wide testbed lock throughout.
    ///
    /// - Throws: ``TestbedError`` when the preload is not active (see ``preloadHelp``), or what `body` throws.
    public static func run<Result: Sendable>(
        _ body: (Testbed) async throws -> Result
    ) async throws -> Result {
        await TestbedLock.shared.acquire()
        defer { TestbedLock.shared.release() }
        let testbed = try Testbed()
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
    @discardableResult
    public func add(_ device: EmulatedDevice) throws(TestbedError) -> String {
        try add(description: device.umockdevDescription)
        return "/sys" + device.devicePath
    }

    /// Adds devices from umockdev's text format (`P:`, `N:`, `E:`, `A:` lines; blank lines between devices).
    public func add(description: String) throws(TestbedError) {
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

    /// Sends a uevent (`add`, `change`, `remove`) for the device at `sysfsPath` to libudev monitors.
    public func uevent(_ sysfsPath: String, _ action: String) {
        umockdev_testbed_uevent(testbed, sysfsPath, action)
    }

    /// Sends the `remove` uevent, then removes the device (umockdev's removal alone sends no uevent).
    public func remove(_ sysfsPath: String) {
        uevent(sysfsPath, "remove")
        umockdev_testbed_remove_device(testbed, sysfsPath)
    }

    /// The master side of the pty behind an emulated `/dev` node that was added without contents (such as
    /// `/dev/iio:device0`): bytes written to it are what readers of the node receive. Owned by the testbed.
    public func masterFileDescriptor(forNode node: String) -> Int32 {
        umockdev_testbed_get_dev_fd(testbed, node)
    }

    /// Writes all of `bytes` to the pty master of `node` (see ``masterFileDescriptor(forNode:)``).
    public func feed(_ node: String, _ bytes: [UInt8]) throws(TestbedError) {
        let fd = masterFileDescriptor(forNode: node)
        guard fd >= 0 else { throw TestbedError("\(node) has no pty (add it without node contents)") }
        var done = 0
        while done < bytes.count {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + done, bytes.count - done) }
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN {
                    var request = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&request, 1, 1000)
                    continue
                }
                throw TestbedError("writing to the pty of \(node) failed: errno \(errno)")
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
final class TestbedLock: Sendable {
    static let shared = TestbedLock()

    private struct State {
        var busy = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = state.withLock { state in
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
        let next = state.withLock { state in
            if state.waiters.isEmpty {
                state.busy = false
                return nil as CheckedContinuation<Void, Never>?
            }
            return state.waiters.removeFirst()  // ownership passes to the next waiter
        }
        next?.resume()
    }
}
