import Foundation
import Testing

/// `motionctl settings` and the settings' effect on the event commands (Docs/Settings.md).
@Suite struct SettingsCommandTests {
    @Test func printsEffectiveValuesAndSources() async throws {
        let home = try Motionctl.configHome("orientation.settleTime = 0.8\n")
        let result = try await Motionctl.run(
            ["settings", "--set", "shake.minimumReversals=3"],
            environment: ["XDG_CONFIG_HOME": home, "SWIFT_MOTION_SHAKE_THRESHOLD": "0.45"])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
        #expect(lines.contains("orientation.settleTime = 0.8 (\(home)/swift-motion/settings.conf:1)"))
        #expect(lines.contains("shake.threshold = 0.45 (environment SWIFT_MOTION_SHAKE_THRESHOLD)"))
        #expect(lines.contains("shake.minimumReversals = 3 (command line shake.minimumReversals=3)"))
        #expect(lines.contains("deviceMotion.referenceFrame = xArbitraryZVertical (default)"))

        let json = try await Motionctl.run(["settings", "--json"], environment: ["XDG_CONFIG_HOME": home])
        let root = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let entries = try #require(root?["settings"] as? [[String: Any]])
        let settle = try #require(entries.first { $0["key"] as? String == "orientation.settleTime" })
        #expect(settle["value"] as? Double == 0.8)
        #expect(settle["allowed"] as? String == "a number of s in [0, 10]")
    }

    @Test func rejectsAnInvalidValueNamingKeySourceAndRange() async throws {
        let home = try Motionctl.configHome("# mine\n\norientation.hysteresis = 50\n")
        let result = try await Motionctl.run(["settings"], environment: ["XDG_CONFIG_HOME": home])
        #expect(result.status == 64)
        #expect(result.stderr.contains(
            "\(home)/swift-motion/settings.conf:3: orientation.hysteresis: expected a number of ° in [0, 45), found \"50\""))
        // The command that reads the setting stops on the same error; one that does not (shake) only warns.
        let orientation = try await Motionctl.run(
            ["orientation", "--trace", "Recordings/simulated-shakes-with-distractors.csv", "--speed", "max"],
            environment: ["XDG_CONFIG_HOME": home])
        #expect(orientation.status == 64)
        #expect(orientation.stderr.contains("settings.conf:3: orientation.hysteresis: expected a number of ° in [0, 45)"))
        let shake = try await Motionctl.run(
            ["shake", "--trace", "Recordings/simulated-shakes-with-distractors.csv", "--speed", "max"],
            environment: ["XDG_CONFIG_HOME": home])
        #expect(shake.status == 0)
        #expect(shake.stderr.hasPrefix("motionctl: warning: \(home)/swift-motion/settings.conf:3: orientation.hysteresis"))
    }

    @Test func eventCommandsTakeTheirDefaultsFromSettingsAndFlagsWin() async throws {
        let trace = ["shake", "--trace", "Recordings/simulated-shakes-with-distractors.csv", "--speed", "max"]
        let empty = try Motionctl.configHome("")
        let byDefault = try await Motionctl.run(trace, environment: ["XDG_CONFIG_HOME": empty])
        #expect(byDefault.status == 0)
        #expect(byDefault.stdout.contains("Shake began"))
        let insensitive = try await Motionctl.run(
            trace, environment: ["XDG_CONFIG_HOME": empty, "SWIFT_MOTION_SHAKE_THRESHOLD": "9"])
        #expect(insensitive.status == 0)
        #expect(!insensitive.stdout.contains("Shake"), "a 9 g threshold finds no shake")
        let flagWins = try await Motionctl.run(
            trace + ["--threshold", "0.3"], environment: ["XDG_CONFIG_HOME": empty, "SWIFT_MOTION_SHAKE_THRESHOLD": "9"])
        #expect(flagWins.stdout == byDefault.stdout)
    }
}
