import Foundation
import MotionAlgorithms
import MotionCore
import Testing

@testable import Motion
import TestFiles

@Suite("MotionSettings: typed settings from defaults, files, environment and command line")
struct SettingsTests {
    /// A folder with a system and a user settings file.
    private func files(system: String?, user: String?) throws -> (system: String, user: String) {
        let folder = try ScratchFolder.folder("settings")
        let paths = (system: folder + "/system.conf", user: folder + "/user.conf")
        if let system { try system.write(toFile: paths.system, atomically: true, encoding: .utf8) }
        if let user { try user.write(toFile: paths.user, atomically: true, encoding: .utf8) }
        return paths
    }

    @Test("Every key has its definition and is found by its name; a misspelt name is no key")
    func typedKeys() {
        #expect(SettingKey.all.map(\.name) == SettingDefinition.all.map(\.key.name))
        for key in SettingKey.all {
            #expect(SettingKey(key.name) == key)
            #expect(key.definition.key == key)
            #expect(MotionSettings()[key].value == key.definition.defaultValue)
        }
        #expect(SettingKey("shake.treshold") == nil)
        #expect(SettingKey("") == nil)
    }

    @Test("loadSkippingProblems keeps the default of a bad value and says which key and line it was; load stops there")
    func skippingProblems() throws {
        let paths = try files(
            system: nil, user: "shake.threshold = abc\nnot a setting line\norientation.settleTime = 2\nfoo.bar = 1\n")
        let (settings, problems) = try MotionSettings.loadSkippingProblems(
            environment: ["SWIFT_MOTION_PEDOMETER_HEIGHT": "9"], systemFile: paths.system, userFile: paths.user)
        #expect(settings[.shakeThreshold].source == .defaults)
        #expect(settings[.orientationSettleTime].value == .number(2))
        #expect(settings[.pedometerHeight].source == .defaults)
        #expect(problems.map(\.key) == [.shakeThreshold, nil, nil, .pedometerHeight])
        #expect(problems.map(\.error.location?.line) == [1, 2, 4, nil])
        #expect(throws: MotionError.self) {
            try MotionSettings.load(environment: [:], systemFile: paths.system, userFile: paths.user)
        }
    }

    @Test("Each source overrides the ones before, and every value says where it came from")
    func sourceOrder() throws {
        let paths = try files(
            system: "# site defaults\nshake.threshold = 0.4\norientation.settleTime = 1\ndeviceMotion.referenceFrame=xMagneticNorthZVertical\n",
            user: "shake.threshold = 0.5   # mine\norientation.settleTime = 2\n")
        let settings = try MotionSettings.load(
            environment: ["SWIFT_MOTION_ORIENTATION_SETTLE_TIME": "3", "SWIFT_MOTION_DEVICE_INCLUDE_BASE": "yes"],
            commandLine: ["orientation.settleTime=4"], systemFile: paths.system, userFile: paths.user)
        #expect(settings[.deviceMotionReferenceFrame].value == .text("xMagneticNorthZVertical"))
        #expect(settings[.deviceMotionReferenceFrame].source == .file(path: paths.system, line: 4))
        #expect(settings[.shakeThreshold].value == .number(0.5))
        #expect(settings[.shakeThreshold].source == .file(path: paths.user, line: 1))
        #expect(settings[.orientationSettleTime].value == .number(4))
        #expect(settings[.orientationSettleTime].source == .commandLine(argument: "orientation.settleTime=4"))
        #expect(settings[.deviceIncludeBase].source == .environment(variable: "SWIFT_MOTION_DEVICE_INCLUDE_BASE"))
        #expect(settings.includeBaseAccelerometers)
        #expect(settings[.shakeMinimumReversals].source == .defaults)
        #expect(settings.shakeConfiguration.threshold == 0.5)
        #expect(settings.orientationConfiguration.settleTime == 4)
        #expect(settings.referenceFrame == .xMagneticNorthZVertical)
        #expect(settings.motionConfiguration.referenceFrame == .xMagneticNorthZVertical)
    }

    @Test("Without any source the values are the algorithms' own defaults")
    func defaults() throws {
        let settings = try MotionSettings.load(environment: [:], systemFile: nil, userFile: .some(nil))
        #expect(settings.entries.allSatisfy { $0.source == .defaults })
        #expect(settings.shakeConfiguration == ShakeDetector<Double>.Configuration())
        #expect(settings.orientationConfiguration == OrientationClassifier<Double>.Configuration())
        #expect(settings.motionConfiguration.magneticDeclination == 0)
        #expect(settings.referenceFrame == .xArbitraryZVertical)
        #expect(settings.accelerometerUpdateInterval == 0.01)
        #expect(settings.deviceSelector == "auto")
    }

    @Test("Environment variable names follow the keys")
    func environmentNames() {
        #expect(SettingDefinition.named("shake.threshold")?.environmentVariable == "SWIFT_MOTION_SHAKE_THRESHOLD")
        #expect(SettingDefinition.named("deviceMotion.updateInterval")?.environmentVariable
            == "SWIFT_MOTION_DEVICE_MOTION_UPDATE_INTERVAL")
        #expect(Set(SettingDefinition.all.map(\.environmentVariable)).count == SettingDefinition.all.count)
    }

    @Test(
        "Values at and beyond each range's ends",
        arguments: [
            ("shake.threshold", "0", false), ("shake.threshold", "0.001", true), ("shake.threshold", "10", true),
            ("shake.threshold", "10.5", false), ("orientation.hysteresis", "0", true),
            ("orientation.hysteresis", "44.9", true), ("orientation.hysteresis", "45", false),
            ("deviceMotion.magneticDeclination", "180", true), ("deviceMotion.magneticDeclination", "-180.5", false),
            ("shake.minimumReversals", "0", false),
            ("shake.minimumReversals", "20", true), ("shake.minimumReversals", "2.5", false),
            ("accelerometer.updateInterval", "nan", false), ("accelerometer.updateInterval", "inf", false),
            ("accelerometer.updateInterval", "-0.1", false), ("accelerometer.updateInterval", " 0.02 ", true),
            ("deviceMotion.referenceFrame", "xMagneticNorthZVertical", true),
            ("deviceMotion.referenceFrame", "north", false), ("device.includeBase", "off", true),
            ("device.includeBase", "maybe", false),
        ])
    func ranges(key: String, text: String, accepted: Bool) {
        var settings = MotionSettings()
        let wasAccepted: Bool
        do {
            try settings.set(key, to: text, from: .commandLine(argument: "\(key)=\(text)"))
            wasAccepted = true
        } catch {
            wasAccepted = false
            #expect(error.message.contains("expected "), "the message says what is allowed")
        }
        #expect(wasAccepted == accepted, "\(key) = \(text)")
    }

    @Test(
        "check(_:) of a parsed value agrees with parse(_:) of its text, words included",
        arguments: [
            ("shake.threshold", SettingValue.number(10), "10"), ("shake.threshold", .number(12), "12"),
            ("shake.threshold", .number(0.001), "0.001"), ("shake.threshold", .number(.nan), "nan"),
            ("orientation.hysteresis", .number(44.9), "44.9"), ("orientation.hysteresis", .number(45), "45"),
            ("shake.minimumReversals", .integer(20), "20"), ("shake.minimumReversals", .integer(21), "21"),
            ("deviceMotion.magneticDeclination", .number(-181), "-181"),
        ])
    func checkAgreesWithParse(key: String, value: SettingValue, text: String) throws {
        let definition = try #require(SettingDefinition.named(key))
        switch (definition.check(value), definition.parse(text)) {
        case (.success(let checked), .success(let parsed)):
            #expect(checked == parsed)
        case (.failure(let checked), .failure(let parsed)):
            #expect(checked.message == parsed.message && checked.code == .invalidArgument)
            #expect(checked.message == "expected \(definition.allowed), found \"\(text)\"")
        default:
            Issue.record("check and parse disagree on \(value) and \"\(text)\"")
        }
    }

    @Test("An invalid value names the key, the source and what is allowed")
    func invalidValueMessage() throws {
        let fromEnvironment = #expect(throws: MotionError.self) {
            _ = try MotionSettings.load(
                environment: ["SWIFT_MOTION_ORIENTATION_HYSTERESIS": "60"], systemFile: nil, userFile: .some(nil))
        }
        #expect(fromEnvironment?.code == .invalidArgument)
        #expect(fromEnvironment?.message
            == "orientation.hysteresis (environment SWIFT_MOTION_ORIENTATION_HYSTERESIS): expected a number of ° in [0, 45), found \"60\"")

        let paths = try files(system: "shake.threshold = 0.4\n\nshake.maximumDuration = soon\n", user: nil)
        let fromFile = #expect(throws: MotionError.self) {
            _ = try MotionSettings.load(environment: [:], systemFile: paths.system, userFile: .some(nil))
        }
        #expect(fromFile?.location?.file == paths.system)
        #expect(fromFile?.location?.line == 3)
        #expect(fromFile?.message.contains("shake.maximumDuration: expected a number of s in (0, 60], found \"soon\"") == true)

        let unknown = #expect(throws: MotionError.self) {
            _ = try MotionSettings.load(environment: [:], commandLine: ["shake.treshold=1"], systemFile: nil, userFile: .some(nil))
        }
        #expect(unknown?.message.hasPrefix("unknown setting \"shake.treshold\" (command line shake.treshold=1); known settings: accelerometer.updateInterval") == true)

        let badLine = try files(system: "shake.threshold 0.4\n", user: nil)
        let notAnAssignment = #expect(throws: MotionError.self) {
            _ = try MotionSettings.load(environment: [:], systemFile: badLine.system, userFile: .some(nil))
        }
        #expect(notAnAssignment?.location?.line == 1)
        #expect(notAnAssignment?.message == "expected key = value, found \"shake.threshold 0.4\"")
    }

    @Test("The user's file is under XDG_CONFIG_HOME, else ~/.config")
    func userFileLocation() {
        #expect(MotionSettings.userFile(environment: ["XDG_CONFIG_HOME": "/x", "HOME": "/home/a"]) == "/x/swift-motion/settings.conf")
        #expect(MotionSettings.userFile(environment: ["HOME": "/home/a"]) == "/home/a/.config/swift-motion/settings.conf")
        #expect(MotionSettings.userFile(environment: ["XDG_CONFIG_HOME": "relative", "HOME": "/h"]) == "/h/.config/swift-motion/settings.conf")
        #expect(MotionSettings.userFile(environment: [:]) == nil)
    }

    @Test("A manager made from settings uses their intervals and configuration")
    func managerFromSettings() throws {
        var settings = MotionSettings()
        try settings.set("accelerometer.updateInterval", to: "0.05", from: .defaults)
        try settings.set("shake.threshold", to: "0.6", from: .defaults)
        let manager = try MotionManager(settings: settings, source: .samples(indexedSamples(count: 10)))
        #expect(manager.accelerometerUpdateInterval == 0.05)
        #expect(manager.engine.configuration.shake.threshold == 0.6)
    }

    @Test("deviceMotion.referenceFrame is the frame of device motion when a subscription names none")
    func referenceFrameSetting() async throws {
        var settings = MotionSettings()
        try settings.set("deviceMotion.referenceFrame", to: "xMagneticNorthZVertical", from: .defaults)
        let samples = indexedSamples(count: 20, magnetometer: true)
        let manager = try MotionManager(settings: settings, source: .samples(samples, pacing: .asFastAsConsumed))
        #expect(manager.attitudeReferenceFrame == .xMagneticNorthZVertical)
        var frames: [AttitudeReferenceFrame] = []
        for try await motion in manager.deviceMotionUpdates(interval: 0, bufferingPolicy: .bufferingOldest(32)) {
            frames.append(motion.referenceFrame)
        }
        #expect(frames.count == 20 && frames.allSatisfy { $0 == .xMagneticNorthZVertical })
        // A frame given by the caller wins.
        let other = try MotionManager(settings: settings, source: .samples(samples))
        other.startDeviceMotionUpdates(using: .xArbitraryZVertical)
        #expect(other.attitudeReferenceFrame == .xArbitraryZVertical)
        other.stopDeviceMotionUpdates()
    }
}
