import Foundation
import Testing

/// Flags that stand for a setting accept exactly the values the setting accepts, and reject the others with the
/// same words (`Sources/motionctl/SettingFlags.swift`, Docs/Settings.md), on the built binary.
@Suite struct SettingFlagTests {
    /// A flag, the setting it stands for, the command that takes it (with an input it can run on), a value the
    /// setting accepts and one it rejects, and the allowed values with their unit.
    struct Case: CustomTestStringConvertible, Sendable {
        var flag: String
        var key: String
        var command: [String]
        var inside: String
        var outside: String
        var allowed: String
        var testDescription: String { "\(flag) / \(key)" }
    }

    static let accelerometer = "t,ax,ay,az\n0,0,-1,0\n0.01,0,-1,0\n"
    static let accelerometerAndGyroscope = "t,ax,ay,az,gx,gy,gz\n0,0,0,-1,0,0,0\n0.01,0,0,-1,0,0,0\n"

    static let cases: [Case] = [
        // 12 g was accepted by `shake --threshold` while shake.threshold rejected it.
        Case(flag: "--threshold", key: "shake.threshold", command: ["shake"], inside: "10", outside: "12",
             allowed: "a number of g in (0, 10]"),
        Case(flag: "--threshold", key: "shake.threshold", command: ["shake"], inside: "0.001", outside: "0",
             allowed: "a number of g in (0, 10]"),
        Case(flag: "--reversals", key: "shake.minimumReversals", command: ["shake"], inside: "20", outside: "21",
             allowed: "a whole number in 1...20"),
        Case(flag: "--max-duration", key: "shake.maximumDuration", command: ["shake"], inside: "60", outside: "61",
             allowed: "a number of s in (0, 60]"),
        Case(flag: "--hysteresis", key: "orientation.hysteresis", command: ["orientation"], inside: "44.9",
             outside: "45", allowed: "a number of ° in [0, 45)"),
        Case(flag: "--settle", key: "orientation.settleTime", command: ["orientation"], inside: "10", outside: "11",
             allowed: "a number of s in [0, 10]"),
        Case(flag: "--cutoff", key: "orientation.cutoff", command: ["orientation"], inside: "50", outside: "51",
             allowed: "a number of Hz in (0, 50]"),
        Case(flag: "--declination", key: "deviceMotion.magneticDeclination", command: ["attitude"], inside: "180",
             outside: "-181", allowed: "a number of ° in [-180, 180]"),
        Case(flag: "--height", key: "pedometer.height", command: ["steps"], inside: "2.5", outside: "2.6",
             allowed: "a number of m in [0.5, 2.5]"),
        Case(flag: "--step-length", key: "pedometer.stepLength", command: ["steps"], inside: "3", outside: "-0.1",
             allowed: "a number of m in [0, 3]"),
    ]

    /// An environment whose user settings file is empty, so only the defaults and the arguments count.
    private func environment() throws -> [String: String] {
        ["XDG_CONFIG_HOME": try Motionctl.configHome("")]
    }

    /// `command --trace FILE --speed max FLAG=VALUE` on a two-sample trace with the sensors the command needs.
    private func runCommand(_ test: Case, _ value: String) async throws -> CommandResult {
        let trace = try Motionctl.temporaryFile(
            test.command == ["attitude"] ? Self.accelerometerAndGyroscope : Self.accelerometer)
        return try await Motionctl.run(
            test.command + ["--trace", trace, "--speed", "max", "\(test.flag)=\(value)"],
            environment: try environment())
    }

    private func runSettings(_ test: Case, _ value: String) async throws -> CommandResult {
        try await Motionctl.run(["settings", "--set", "\(test.key)=\(value)"], environment: try environment())
    }

    @Test(arguments: cases)
    func aValueTheSettingAcceptsIsAcceptedByTheFlag(_ test: Case) async throws {
        let setting = try await runSettings(test, test.inside)
        #expect(setting.status == 0, "\(setting.stderr)")
        #expect(setting.stdout.contains("\(test.key) = \(test.inside)"))
        let flag = try await runCommand(test, test.inside)
        #expect(flag.status == 0, "\(flag.stderr)")
        #expect(flag.stderr.isEmpty)
    }

    @Test(arguments: cases)
    func aValueTheSettingRejectsIsRejectedByTheFlagWithTheSameWords(_ test: Case) async throws {
        let problem = "expected \(test.allowed), found \"\(test.outside)\""
        let setting = try await runSettings(test, test.outside)
        #expect(setting.status == 64)
        #expect(setting.stderr.contains("\(test.key) (command line \(test.key)=\(test.outside)): \(problem)"))
        let flag = try await runCommand(test, test.outside)
        #expect(flag.status == 64)
        #expect(flag.stdout.isEmpty)
        #expect(flag.stderr.hasPrefix("motionctl: error: \(test.flag): \(problem)"), "\(flag.stderr)")
    }

    @Test func helpStatesTheSettingsRange() async throws {
        let result = try await Motionctl.run(["shake", "--help"])
        let help = result.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(help.contains("Allowed: a number of g in (0, 10] (shake.threshold)."))
    }

    /// One bad key in the settings file (`shake.threshold = abc`) fails only a command that uses it without the
    /// flag that replaces it, naming the file, the line and the key; the others run and warn once on stderr (all
    /// of these used to exit with 64).
    @Test func aBadSettingOnlyStopsTheCommandsThatUseIt() async throws {
        let home = try Motionctl.configHome("# tuned by hand\norientation.cutoff = 2\nshake.threshold = abc\n")
        let file = home + "/swift-motion/settings.conf"
        let environment = ["XDG_CONFIG_HOME": home]
        let accelerometer = try Motionctl.temporaryFile(Self.accelerometer)
        let sixAxis = try Motionctl.temporaryFile(Self.accelerometerAndGyroscope)
        let problem = "\(file):3: shake.threshold: expected a number of g in (0, 10], found \"abc\""

        let shake = try await Motionctl.run(["shake", "--trace", accelerometer, "--speed", "max"], environment: environment)
        #expect(shake.status == 64, "\(shake.stderr)")
        #expect(shake.stderr == "motionctl: error: \(problem)\n", "\(shake.stderr)")

        let replaced = try await Motionctl.run(
            ["shake", "--trace", accelerometer, "--speed", "max", "--threshold", "0.3"], environment: environment)
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(replaced.stderr == "motionctl: warning: \(problem) (ignored: a flag replaces it; motionctl settings lists every problem)\n")

        for command in [["attitude", "--trace", sixAxis], ["orientation", "--trace", accelerometer], ["steps", "--trace", accelerometer]] {
            let result = try await Motionctl.run(command + ["--speed", "max"], environment: environment)
            #expect(result.status == 0, "\(command): \(result.stderr)")
            #expect(result.stderr == "motionctl: warning: \(problem) (ignored: this command does not use it; motionctl settings lists every problem)\n", "\(command)")
        }
        // The good line before the bad one still counts, and `settings` reports the problem as an error.
        let settings = try await Motionctl.run(["settings"], environment: environment)
        #expect(settings.status == 64)
        #expect(settings.stderr.contains(problem))
    }
}
