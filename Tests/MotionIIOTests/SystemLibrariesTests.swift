import MotionIIO

#if canImport(Glibc)
import Glibc
#endif
import Testing

@Suite struct SystemLibrariesTests {
    @Test func libiioReportsItsVersion() {
        let parts = SystemLibraries.libiioVersion.split(separator: ".")
        #expect(parts.count == 2)
        #expect(parts.allSatisfy { Int($0) != nil })
        #expect(SystemLibraries.libiioVersion != "0.0")
    }

    @Test func libudevContextCanBeCreated() {
        #expect(SystemLibraries.isUdevUsable)
    }
}

@Suite struct LoadedLibraryFileTests {
    @Test func libudevAndLibiioFilesAreTheMappedOnes() throws {
        let udev = try #require(SystemLibraries.libudevFile)
        let iio = try #require(SystemLibraries.libiioFile)
        #expect(udev.hasPrefix("/") && udev.contains("/libudev.so."))
        #expect(iio.hasPrefix("/") && iio.contains("/libiio.so."))
        #expect(access(udev, R_OK) == 0 && access(iio, R_OK) == 0)
        // libiio's own version call and its file name agree.
        #expect(SystemLibraries.version(ofLibraryFile: iio)?.hasPrefix(SystemLibraries.libiioVersion) == true)
    }

    @Test(arguments: [
        ("/usr/lib/x86_64-linux-gnu/libudev.so.1.7.5", "1.7.5"), ("/lib/libiio.so.0.24", "0.24"),
        ("/opt/a.so.d/libx.so", nil), ("libudev.so.1", "1"),
    ] as [(String, String?)])
    func versionFromTheFileName(path: String, version: String?) {
        #expect(SystemLibraries.version(ofLibraryFile: path) == version)
    }
}
