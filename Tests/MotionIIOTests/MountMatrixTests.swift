import Foundation
#if canImport(Glibc)
import Glibc
#endif
import IIOTestbed
import MotionCore
import MotionIIO
import TestThreads
import Testing

@Suite struct MountMatrixTests {
    @Test func parsesTheKernelFormat() throws {
        let matrix = try MountMatrix.parse("0, 1, 0; -1, 0, 0; 0, 0, 1").get()
        #expect(matrix.xRow == [0, 1, 0])
        #expect(matrix.yRow == [-1, 0, 0])
        #expect(matrix.zRow == [0, 0, 1])
        #expect(matrix.description == "0, 1, 0; -1, 0, 0; 0, 0, 1")
    }

    @Test func acceptsDecimalsWhiteSpaceAndATrailingNewline() throws {
        let matrix = try MountMatrix.parse(" 0.707,-0.707,0;0.707, 0.707 ,0; 0, 0, 1e0\n").get()
        #expect(matrix.xRow == [0.707, -0.707, 0])
        #expect(matrix.yRow == [0.707, 0.707, 0])
        #expect(matrix.zRow == [0, 0, 1])
        #expect(matrix.description == "0.707, -0.707, 0; 0.707, 0.707, 0; 0, 0, 1")
    }

    /// corrected = M · raw: row i of the text gives output axis i. With a NON-symmetric matrix this differs
    /// from the transpose (`raw · M`, which iio-sensor-proxy's README describes).
    @Test func correctsAsMatrixTimesRaw() throws {
        let matrix = try MountMatrix.parse("0, -1, 0; 1, 0, 0; 0, 0, 1").get()
        let raw = SIMD3<Double>(100, -1000, 30)
        #expect(matrix.apply(to: raw) == [1000, 100, 30])
        // The transpose would have given (−1000, −100, 30).
        let transposed = try MountMatrix.parse("0, 1, 0; -1, 0, 0; 0, 0, 1").get()
        #expect(transposed.apply(to: raw) == [-1000, -100, 30])
        #expect(MountMatrix.identity.apply(to: raw) == raw)
    }

    /// Empty means identity, as iio-sensor-proxy's `parse_mount_matrix` (ported case: IioSensorProxyUpstreamTests);
    /// an empty sysfs attribute reads as a lone newline.
    @Test func emptyTextIsTheIdentity() throws {
        #expect(try MountMatrix.parse("").get() == .identity)
        #expect(try MountMatrix.parse("\n").get() == .identity)
    }

    struct RejectCase: CustomTestStringConvertible, Sendable {
        let text: String
        let reason: String
        var testDescription: String { "\"\(text)\"" }
    }

    static let rejected: [RejectCase] = [
        .init(text: "0, 1, 0; 1, 0, 0; 0, 0, 0", reason: "has an all-zero row for axis z"),
        .init(text: "0, 0, 0; 1, 0, 0; 0, 0, 1", reason: "has an all-zero row for axis x"),
        .init(text: "1, 0, 0; 0, 1, 0", reason: "does not have 3 rows separated by ';'"),
        .init(text: "1, 0, 0; 0, 1, 0; 0, 0, 1; 1, 1, 1", reason: "does not have 3 rows separated by ';'"),
        .init(text: "1, 0; 0, 1, 0; 0, 0, 1", reason: "row 1 does not have 3 numbers separated by ','"),
        .init(text: "1, 0, 0; 0, 1, 0; 0, 0, 1, 0", reason: "row 3 does not have 3 numbers separated by ','"),
        .init(text: "1, 0, 0; 0, one, 0; 0, 0, 1", reason: "has \"one\", which is not a number"),
        .init(text: "1, 0, 0; 0, 1, 0; 0, 0, 1x", reason: "has \"1x\", which is not a number"),
        .init(text: "1, 0, 0; 0, 1,, 0; 0, 0, 1", reason: "row 2 does not have 3 numbers separated by ','"),
        .init(text: "1,5, 0, 0; 0, 1, 0; 0, 0, 1", reason: "row 1 does not have 3 numbers separated by ','"),
        .init(text: "nan, 0, 0; 0, 1, 0; 0, 0, 1", reason: "has \"nan\", which is not a number"),
        .init(text: "inf, 0, 0; 0, 1, 0; 0, 0, 1", reason: "has \"inf\", which is not a number"),
        .init(text: "0x1, 0, 0; 0, 1, 0; 0, 0, 1", reason: "has \"0x1\", which is not a number"),
        .init(text: " ", reason: "does not have 3 rows separated by ';'"),
    ]

    @Test(arguments: rejected)
    func rejects(_ testCase: RejectCase) {
        switch MountMatrix.parse(testCase.text) {
        case .success(let matrix):
            Issue.record("accepted as \(matrix)")
        case .failure(let error):
            #expect(error.code == .invalidArgument)
            #expect(error.message == "mount matrix \"\(testCase.text)\" \(testCase.reason)")
        }
    }

    /// The decimal point is `.` whatever the C locale says (iio-sensor-proxy once broke under fr_FR), with the
    /// system's `fr_FR.UTF-8` or one built with `localedef`. Loading a built one needs `LOCPATH` in the
    /// environment, which is not safe to change while other threads run, so the check runs in a child process
    /// (an exit test).
    @Test(.requires(.commaDecimalLocale))
    func parsesTheSameUnderACommaDecimalLocale() async throws {
        if CommaLocale.make() == nil { try await CommaLocale.build() }
        await #expect(processExitsWith: .success) {
            var locale = CommaLocale.make()
            if locale == nil {
                setenv("LOCPATH", CommaLocale.builtDirectory, 1)
                locale = CommaLocale.make()
            }
            guard let locale else { exit(2) }
            uselocale(locale)
            guard strtod("0.5", nil) == 0 else { exit(3) }  // the comma locale is in effect
            guard case .success(let matrix) = MountMatrix.parse("0.5, 0, 0; 0, 1, 0; 0, 0, 1"), matrix.xRow == [0.5, 0, 0]
            else { exit(4) }
            guard SamplingFrequencies(parsing: "12.5 25") == .list([12.5, 25]) else { exit(5) }
            // iio-sensor-proxy 3.9 (0085ddf8ecb1) src/test-mount-matrix.c, /iio-sensor-proxy/comma-decimal-separator:
            // DEFAULT_MATRIX parses under fr_FR.UTF-8.
            guard case .success(.identity) = MountMatrix.parse("1, 0, 0; 0, 1, 0; 0, 0, 1") else { exit(6) }
            exit(0)
        }
    }
}

extension Prerequisite {
    /// A `fr_FR.UTF-8` locale: the system's, or one `localedef` can build from the fr_FR sources.
    static let commaDecimalLocale = Prerequisite(
        "a fr_FR.UTF-8 locale (decimal comma)",
        help: "install the locales package (localedef and /usr/share/i18n/locales/fr_FR) or generate fr_FR.UTF-8"
    ) {
        CommaLocale.make() != nil
            || FileManager.default.fileExists(atPath: CommaLocale.builtDirectory + "/fr_FR.UTF-8/LC_NUMERIC")
            || (FileManager.default.isExecutableFile(atPath: "/usr/bin/localedef")
                && FileManager.default.fileExists(atPath: "/usr/share/i18n/locales/fr_FR"))
    }
}

/// A `fr_FR.UTF-8` locale (decimal comma) for this thread, when the system has one.
enum CommaLocale {
    static func make() -> locale_t? {
        newlocale(LC_NUMERIC_MASK, "fr_FR.UTF-8", nil)
    }

    /// Where `localedef` builds one when the system has none.
    static let builtDirectory = "/tmp/swift-motion-locales"

    /// Builds `fr_FR.UTF-8` into ``builtDirectory`` unless it is there (`localedef` waited for on a thread of its
    /// own, ``BlockingCall``).
    static func build() async throws {
        guard !FileManager.default.fileExists(atPath: builtDirectory + "/fr_FR.UTF-8/LC_NUMERIC") else { return }
        try FileManager.default.createDirectory(atPath: builtDirectory, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/localedef")
        process.arguments = ["-i", "fr_FR", "-f", "UTF-8", builtDirectory + "/fr_FR.UTF-8"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        await process.waitForExit()
        // localedef exits 1 for warnings while still writing the locale; the file is what counts.
        #expect(FileManager.default.fileExists(atPath: builtDirectory + "/fr_FR.UTF-8/LC_NUMERIC"),
                "localedef -i fr_FR -f UTF-8 exited \(process.terminationStatus) without building the locale")
    }
}

@Suite struct SamplingFrequenciesTests {
    @Test func parsesListsAndRanges() {
        #expect(SamplingFrequencies(parsing: "1 10 25 50 100 200 400\n") == .list([1, 10, 25, 50, 100, 200, 400]))
        #expect(
            SamplingFrequencies(parsing: "800.000000 400.000000 12.500000 1.560000")
                == .list([800, 400, 12.5, 1.56]))
        #expect(SamplingFrequencies(parsing: "[1 1 400]") == .range(min: 1, step: 1, max: 400))
        #expect(SamplingFrequencies(parsing: "[0.5 0.5 100]") == .range(min: 0.5, step: 0.5, max: 100))
        #expect(SamplingFrequencies(parsing: "") == nil)
        #expect(SamplingFrequencies(parsing: "fast slow") == nil)
        #expect(SamplingFrequencies(parsing: "[1 400]") == nil)
        #expect(SamplingFrequencies(parsing: "[400 1 1]") == nil)
        #expect(SamplingFrequencies(parsing: "1 10 25")?.description == "1 10 25")
        #expect(SamplingFrequencies(parsing: "[0.5 0.5 100]")?.description == "[0.5 0.5 100]")
    }

    @Test(arguments: [
        (100.0, 100.0), (101, 200), (0.1, 1), (5.2, 10), (1000, 400), (400, 400),
    ])
    func picksTheNearestAtOrAbove(_ asked: Double, _ chosen: Double) {
        #expect(SamplingFrequencies.list([1, 10, 25, 50, 100, 200, 400]).nearest(atLeast: asked) == chosen)
    }

    @Test func neverPicksZeroHertz() {
        #expect(SamplingFrequencies.list([0, 12.5, 25]).nearest(atLeast: 0) == 12.5)
        #expect(SamplingFrequencies.list([0]).nearest(atLeast: 10) == nil)
    }

    @Test func picksFromRanges() {
        let range = SamplingFrequencies.range(min: 10, step: 5, max: 100)
        #expect(range.nearest(atLeast: 12) == 15)
        #expect(range.nearest(atLeast: 15) == 15)
        #expect(range.nearest(atLeast: 1) == 10)
        #expect(range.nearest(atLeast: 500) == 100)
        #expect(SamplingFrequencies.range(min: 1, step: 0, max: 100).nearest(atLeast: 33.3) == 33.3)
    }
}
