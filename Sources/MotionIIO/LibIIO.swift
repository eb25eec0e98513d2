internal import CLibIIO
import MotionCore
import MotionSystem

#if canImport(Glibc)
import Glibc
#endif

/// A libiio local context (`iio_create_local_context`), destroyed with the last reference. Device and buffer
/// pointers obtained from it are valid only while it lives: their owners keep a strong reference to it.
final class IIOContextHandle {
    let pointer: OpaquePointer

    init() throws(MotionError) {
        errno = 0
        guard let pointer = iio_create_local_context() else {
            let code = errno  // set by libiio; read before anything else can change it
            if code == ENOENT {
                // No IIO device at all: the last one was removed (perhaps while being opened), or none is loaded.
                throw MotionError(
                    .deviceNotFound, "no IIO devices: /sys/bus/iio/devices does not exist (is the driver loaded?)",
                    at: .init(file: "/sys/bus/iio/devices"), underlying: SystemErrno(code))
            }
            throw MotionError(
                code == EACCES ? .permissionDenied : .ioFailure,
                "libiio could not read the IIO devices in /sys/bus/iio"
                    + (code == EACCES ? "; see Docs/Devices.md for the udev rule that grants access" : ""),
                at: .init(file: "/sys/bus/iio/devices"), underlying: SystemErrno(code == 0 ? EIO : code))
        }
        self.pointer = pointer
    }

    deinit {
        iio_context_destroy(pointer)
    }

    /// Enables exactly `channels` (libiio ids such as `accel_x`, `timestamp`) of device `deviceID` and opens a
    /// non-blocking buffer of `samples` scans: libiio writes `scan_elements/*_en`, `buffer/length` and
    /// `buffer/enable`, and opens `node`.
    ///
    /// The corresponding libiio functions are `iio_channel_enable` and `iio_device_create_buffer`.
    ///
    /// - Returns: The buffer, and whether libiio reads it with `read(2)` (it said so: ``libiioHighSpeedWarning``,
    ///   which every mainline kernel gets) rather than through Analog Devices' mmap interface.
    func openBuffer(deviceID: String, channels: [String], samples: Int, node: String) throws(MotionError)
        -> (buffer: OpaquePointer, readsWithRead: Bool)
    {
        guard let device = iio_context_find_device(pointer, deviceID) else {
            throw MotionError(.deviceNotFound, "libiio does not list \(deviceID)", at: .init(file: node))
        }
        for index in 0..<iio_device_get_channels_count(device) {
            if let channel = iio_device_get_channel(device, index) { iio_channel_disable(channel) }
        }
        for id in channels {
            guard let channel = iio_device_find_channel(device, id, false) else {
                throw MotionError(
                    .unsupported, "libiio does not list channel \(id) of \(deviceID)", at: .init(file: node))
            }
            iio_channel_enable(channel)
        }
        let ((created, createErrno), readsWithRead) = withoutLibiioHighSpeedWarning {
            errno = 0
            let buffer = iio_device_create_buffer(device, samples, false)
            return (buffer, errno)  // read before anything else can change it
        }
        guard let buffer = created else {
            let code = createErrno == 0 ? EIO : createErrno
            let error = SystemErrno(code)
            // See: iio.h iio_device_create_buffer (NULL with errno set); local backend local_open.
            switch error {
            case .busy:
                throw MotionError(
                    .unsupported,
                    "\(deviceID) is busy: another program (such as iio-sensor-proxy or iio_readdev) is capturing from it",
                    at: .init(file: node), underlying: IIOReadError(.busy, device: deviceID, systemError: error))
            default:
                throw MotionError.deviceAccess(error, "open the buffer of", node)
            }
        }
        let result = iio_buffer_set_blocking_mode(buffer, false)
        guard result == 0 else {
            iio_buffer_destroy(buffer)
            throw MotionError(.ioFailure, "cannot make the buffer of \(deviceID) non-blocking", at: .init(file: node),
                underlying: SystemErrno(-result))
        }
        return (buffer, readsWithRead)
    }
}

/// The buffer's poll descriptor (`iio_buffer_get_poll_fd`), or a negative errno.
func iioBufferPollFD(_ buffer: OpaquePointer) -> Int32 {
    iio_buffer_get_poll_fd(buffer)
}

/// Disables and frees a buffer (`iio_buffer_destroy`; libiio writes `buffer/enable` = 0).
func iioBufferDestroy(_ buffer: OpaquePointer) {
    iio_buffer_destroy(buffer)
}

/// Reads what the device has (`iio_buffer_refill` in non-blocking mode) and returns the bytes read, which stay
/// valid until the next refill; `EAGAIN` when nothing is available.
func iioBufferRefill(_ buffer: OpaquePointer) -> Result<UnsafeRawBufferPointer, SystemErrno> {
    let result = iio_buffer_refill(buffer)
    // See: iio.h iio_buffer_refill: the number of bytes read, or a negative errno.
    guard result >= 0 else { return .failure(SystemErrno(Int32(-result))) }
    guard let start = iio_buffer_start(buffer) else { return .success(UnsafeRawBufferPointer(start: nil, count: 0)) }
    return .success(UnsafeRawBufferPointer(start: UnsafeRawPointer(start), count: Int(result)))
}
