internal import CLibUdev
package import MotionCore
import MotionSystem

#if canImport(Glibc)
import Glibc
#endif

/// A libudev monitor socket (`udev_monitor_new_from_netlink(udev, "udev")`) filtered to one subsystem.
final class UdevMonitor {
    let context: UdevContext
    let pointer: OpaquePointer
    let fileDescriptor: Int32

    init(subsystem: String) throws(MotionError) {
        context = try UdevContext()
        guard let monitor = udev_monitor_new_from_netlink(context.pointer, "udev") else {
            throw MotionError(.unsupported, "libudev cannot monitor devices", underlying: SystemErrno.current())
        }
        pointer = monitor
        udev_monitor_filter_add_match_subsystem_devtype(monitor, subsystem, nil)
        let result = udev_monitor_enable_receiving(monitor)
        guard result >= 0 else {
            udev_monitor_unref(monitor)
            throw MotionError(.unsupported, "libudev cannot monitor devices", underlying: SystemErrno(-result))
        }
        fileDescriptor = udev_monitor_get_fd(monitor)
        // libudev opens the socket non-blocking; make sure, since receive() must never block.
        let flags = fcntl(fileDescriptor, F_GETFL)
        if flags >= 0 { _ = fcntl(fileDescriptor, F_SETFL, flags | O_NONBLOCK) }
    }

    deinit {
        Reactor.shared.forget(fileDescriptor)
        udev_monitor_unref(pointer)
    }

    /// The next queued event, or `nil` when none is waiting.
    func receive() -> UdevDevice? {
        udev_monitor_receive_device(pointer).map { UdevDevice(owning: $0, context: context) }
    }
}

/// A change in the set of IIO motion devices.
package enum IIODeviceChange: Hashable, Sendable {
    /// A motion device appeared (udev `add`), described as discovery would.
    case added(IIODevice)
    /// A device went away (udev `remove`): its id (such as `iio:device0`) and sysfs path.
    case removed(id: String, sysfsPath: String)
    /// A device's properties changed (udev `change`), described afresh.
    case changed(IIODevice)
}

/// Watches for IIO devices being added and removed, as an asynchronous sequence of ``IIODeviceChange``.
///
/// Built on a libudev monitor: the task suspends until the monitor socket is readable (no polling). Triggers,
/// devices without motion channels and (unless `includeBase`) base accelerometers are left out of `added` and
/// `changed`; every IIO `remove` is reported, since the device can no longer be read to tell what it was.
/// Create the monitor before listing devices, so nothing added in between is missed.
package final class IIODeviceMonitor: AsyncSequence {
    package typealias Element = IIODeviceChange
    package typealias Failure = MotionError

    private let monitor: UdevMonitor
    private let includeBase: Bool

    /// Starts watching.
    ///
    /// - Throws: `MotionError.Code.unsupported` when libudev cannot monitor devices.
    package init(includeBase: Bool = false) throws(MotionError) {
        monitor = try UdevMonitor(subsystem: "iio")
        self.includeBase = includeBase
    }

    /// The next event; suspends until one arrives.
    ///
    /// - Throws: `MotionError.Code.cancelled` when the task is cancelled.
    package func next() async throws(MotionError) -> IIODeviceChange {
        // Without a deadline, the wait returns only with an event.
        try await next(until: nil)!
    }

    /// The next event, or `nil` when `deadline` (`CLOCK_MONOTONIC` ns) passes first.
    func next(until deadline: UInt64?) async throws(MotionError) -> IIODeviceChange? {
        while true {
            while let device = monitor.receive() {
                if let event = event(for: device) { return event }
            }
            if let deadline, monotonicNanoseconds() >= deadline { return nil }
            do {
                _ = try await Reactor.shared.wait(readable: [monitor.fileDescriptor], until: deadline)
            } catch is CancellationError {
                throw MotionError(.cancelled, "device monitoring was cancelled")
            } catch {
                throw MotionError(.ioFailure, "cannot wait for device events (\(error))")
            }
        }
    }

    private func event(for device: UdevDevice) -> IIODeviceChange? {
        guard !device.sysname.hasPrefix("trigger") else { return nil }
        switch device.action {
        case "remove":
            return .removed(id: device.sysname, sysfsPath: device.sysfsPath)
        case "add", "change":
            // Describe it from a fresh udev object (the event's own may carry partial properties), with the
            // triggers known now.
            let udev = monitor.context
            guard let fresh = udev.device(sysfsPath: device.sysfsPath) else { return nil }
            let triggers = ((try? udev.devicePaths(subsystem: "iio")) ?? [])
                .compactMap { udev.device(sysfsPath: $0) }
                .filter { $0.sysname.hasPrefix("trigger") }
                .map(IIODeviceDiscovery.TriggerInfo.init)
            guard case .device(let described) = IIODeviceDiscovery.describe(fresh, triggers: triggers),
                includeBase || described.location.value != .base
            else { return nil }
            return device.action == "add" ? .added(described) : .changed(described)
        default:
            return nil
        }
    }

    /// The monitor as its own iterator.
    package func makeAsyncIterator() -> Iterator { Iterator(monitor: self) }

    /// Calls ``IIODeviceMonitor/next()``; ends (returns `nil`) when the task is cancelled.
    package struct Iterator: AsyncIteratorProtocol {
        package typealias Element = IIODeviceChange
        package typealias Failure = MotionError

        let monitor: IIODeviceMonitor

        /// The next event, or `nil` once the task is cancelled.
        package mutating func next() async throws(MotionError) -> IIODeviceChange? {
            do {
                return try await monitor.next()
            } catch where error.code == .cancelled {
                return nil
            }
        }
    }
}
