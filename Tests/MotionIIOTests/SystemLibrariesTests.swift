import MotionIIO
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
