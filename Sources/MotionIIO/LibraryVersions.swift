internal import CLibIIO
internal import CLibUdev

/// The versions of the system libraries swift-motion reads devices through.
public enum SystemLibraries {
    /// The libiio version the process loaded, such as `0.24`, from `iio_library_get_version`.
    public static var libiioVersion: String {
        var major: UInt32 = 0
        var minor: UInt32 = 0
        var tag = [CChar](repeating: 0, count: 8)
        iio_library_get_version(&major, &minor, &tag)
        return "\(major).\(minor)"
    }

    /// `true` when a libudev context can be created (the library loads and `/sys` is readable).
    public static var isUdevUsable: Bool {
        guard let udev = udev_new() else { return false }
        udev_unref(udev)
        return true
    }
}
