internal import CLibUdev
import MotionCore
import MotionSystem

#if canImport(Glibc)
import Glibc
#endif

/// A libudev context (`struct udev`), freed with `udev_unref` when the last reference goes.
final class UdevContext {
    let pointer: OpaquePointer

    init() throws(MotionError) {
        guard let pointer = udev_new() else {
            throw MotionError(
                .unsupported, "libudev could not create a context (udev_new failed)",
                underlying: SystemErrno.current())
        }
        self.pointer = pointer
    }

    deinit {
        udev_unref(pointer)
    }

    /// The sysfs paths of every device of `subsystem`, in libudev's order (`udev_enumerate_*`).
    func devicePaths(subsystem: String) throws(MotionError) -> [String] {
        guard let enumerate = udev_enumerate_new(pointer) else {
            throw MotionError(.ioFailure, "libudev could not enumerate devices", underlying: SystemErrno.current())
        }
        defer { udev_enumerate_unref(enumerate) }
        udev_enumerate_add_match_subsystem(enumerate, subsystem)
        let result = udev_enumerate_scan_devices(enumerate)
        if result < 0 {
            throw MotionError(
                .ioFailure, "libudev could not scan the \(subsystem) devices in /sys",
                underlying: SystemErrno(-result))
        }
        return UdevList(first: udev_enumerate_get_list_entry(enumerate)).map(\.name)
    }

    /// The device at a sysfs path, or `nil` when there is none.
    func device(sysfsPath: String) -> UdevDevice? {
        udev_device_new_from_syspath(pointer, sysfsPath).map { UdevDevice(owning: $0, context: self) }
    }
}

/// A libudev device (`struct udev_device`). Reads are cached by libudev for the object's lifetime.
final class UdevDevice {
    let pointer: OpaquePointer
    private let context: UdevContext?

    init(owning pointer: OpaquePointer, context: UdevContext?) {
        self.pointer = pointer
        self.context = context
    }

    deinit {
        udev_device_unref(pointer)
    }

    var sysfsPath: String { udev_device_get_syspath(pointer).map { String(cString: $0) } ?? "" }
    var sysname: String { udev_device_get_sysname(pointer).map { String(cString: $0) } ?? "" }
    var subsystem: String? { udev_device_get_subsystem(pointer).map { String(cString: $0) } }
    var deviceNode: String? { udev_device_get_devnode(pointer).map { String(cString: $0) } }
    var action: String? { udev_device_get_action(pointer).map { String(cString: $0) } }

    /// The udev property `name` (such as `ACCEL_MOUNT_MATRIX`), or `nil`.
    func property(_ name: String) -> String? {
        udev_device_get_property_value(pointer, name).map { String(cString: $0) }
    }

    /// The sysfs attribute `name` (relative path, such as `in_accel_scale` or `buffer/enable`) without its
    /// trailing newline, or `nil` when it does not exist or cannot be read.
    func attribute(_ name: String) -> String? {
        udev_device_get_sysattr_value(pointer, name).map { String(cString: $0) }
    }

    /// The names of the device's top-level sysfs attributes.
    var attributeNames: [String] {
        UdevList(first: udev_device_get_sysattr_list_entry(pointer)).map(\.name)
    }

    /// The parent's sysfs path, or `nil`.
    var parentPath: String? {
        // udev_device_get_parent returns a pointer owned by the child: not unreferenced here.
        udev_device_get_parent(pointer).flatMap { udev_device_get_syspath($0) }.map { String(cString: $0) }
    }
}

/// libudev's `udev_list_entry` chain as a Swift sequence (the C `udev_list_entry_foreach` macro).
struct UdevList: Sequence {
    struct Entry {
        let name: String
        let value: String?
    }

    let first: OpaquePointer?

    func makeIterator() -> AnyIterator<Entry> {
        var current = first
        return AnyIterator {
            guard let entry = current else { return nil }
            current = udev_list_entry_get_next(entry)
            let name = udev_list_entry_get_name(entry).map { String(cString: $0) } ?? ""
            let value = udev_list_entry_get_value(entry).map { String(cString: $0) }
            return Entry(name: name, value: value)
        }
    }
}
