import MotionCore
internal import CLibIIO
internal import CLibUdev

#if canImport(Glibc)
import Glibc
#endif

/// The versions of the system libraries swift-motion reads devices through.
package enum SystemLibraries {
    /// `TOOL VERSION (swift-motion)`, then the libiio and libudev this process loaded, each with its file: what
    /// `motionctl --version` and `motiond --version` print (`Docs/CLI.md`).
    package static func versionReport(tool: String) -> String {
        let iio = libiioFile.map { " (\($0))" } ?? ""
        let udev =
            libudevFile.map { "libudev \(version(ofLibraryFile: $0) ?? "(version unknown)") (\($0))" }
            ?? "libudev (not found in /proc/self/maps)"
        return "\(tool) \(SwiftMotion.version) (swift-motion)\nlibiio \(libiioVersion)\(iio)\n\(udev)"
    }

    /// The libiio version the process loaded, such as `0.24`, from `iio_library_get_version`.
    package static var libiioVersion: String {
        var major: UInt32 = 0
        var minor: UInt32 = 0
        var tag = [CChar](repeating: 0, count: 8)
        iio_library_get_version(&major, &minor, &tag)
        return "\(major).\(minor)"
    }

    /// The loaded libiio's file, such as `/usr/lib/x86_64-linux-gnu/libiio.so.0.24`, or `nil` when
    /// `/proc/self/maps` cannot be read.
    package static var libiioFile: String? { loadedFile(named: "libiio.so") }

    /// The loaded libudev's file, such as `/usr/lib/x86_64-linux-gnu/libudev.so.1.7.5`, or `nil` when
    /// `/proc/self/maps` cannot be read. libudev has no version call; the file's name carries its version.
    package static var libudevFile: String? {
        _ = udev_new().map(udev_unref)  // make sure it is mapped
        return loadedFile(named: "libudev.so")
    }

    /// The version in a shared library's file name: `1.7.5` for `…/libudev.so.1.7.5`, or `nil`.
    package static func version(ofLibraryFile path: String) -> String? {
        let name = path.split(separator: "/").last ?? Substring(path)
        guard let range = name.firstRange(of: ".so.") else { return nil }
        let version = name[range.upperBound...]
        return version.isEmpty ? nil : String(version)
    }

    /// `true` when a libudev context can be created (the library loads and `/sys` is readable).
    package static var isUdevUsable: Bool {
        guard let udev = udev_new() else { return false }
        udev_unref(udev)
        return true
    }

    /// The resolved path of the first mapping in `/proc/self/maps` whose file name starts with `name`.
    private static func loadedFile(named name: String) -> String? {
        guard case .success(let maps) = Sysfs.read("/proc/self/maps", limit: 1 << 20) else { return nil }
        for line in maps.split(separator: "\n") {
            guard let slash = line.firstIndex(of: "/") else { continue }
            let path = String(line[slash...])
            guard path.split(separator: "/").last?.hasPrefix(name) == true else { continue }
            guard let resolved = realpath(path, nil) else { return path }
            defer { free(resolved) }
            return String(cString: resolved)
        }
        return nil
    }
}
