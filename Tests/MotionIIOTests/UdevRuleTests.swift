import Foundation
import IIOTestbed
import TestFiles
import TestThreads
import Testing

/// The shipped udev rule (Support/udev/70-swift-motion.rules): its RUN command, run on a copy of a device's
/// sysfs folder, gives the group read-write access to exactly the attributes a capture writes.
@Suite struct UdevRuleTests {
    static let rulePath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Support/udev/70-swift-motion.rules").path

    @Test func ruleMatchesIIODevicesAndSetsTheNode() throws {
        let text = try String(contentsOfFile: Self.rulePath, encoding: .utf8)
        let rules = text.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.isEmpty }
        #expect(rules.contains("SUBSYSTEM!=\"iio\", GOTO=\"swift_motion_end\""))
        #expect(rules.contains("KERNEL!=\"iio:device*\", GOTO=\"swift_motion_end\""))
        #expect(rules.contains("GROUP=\"iio\", MODE=\"0660\""))
        #expect(rules.last == "LABEL=\"swift_motion_end\"")
    }

    @Test(.requires(.root)) func runCommandOpensTheCaptureAttributesToTheGroup() async throws {
        let text = try String(contentsOfFile: Self.rulePath, encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("RUN+=") })
        // RUN+="/bin/sh -c '…'" with \" inside: take the value and undo udev's escaping.
        var command = String(line.dropFirst("RUN+=\"".count).dropLast()).replacingOccurrences(of: "\\\"", with: "\"")
        #expect(command.hasPrefix("/bin/sh -c '"))
        command = String(command.dropFirst("/bin/sh -c '".count).dropLast())

        let root = URL(fileURLWithPath: ScratchFolder.path("udev-rule"))
        defer { try? FileManager.default.removeItem(at: root) }
        let device = root.appendingPathComponent("devices/platform/x/iio:device0").path
        let written = [
            "buffer/enable", "buffer/length", "buffer/watermark", "scan_elements/in_accel_x_en",
            "scan_elements/in_timestamp_en", "trigger/current_trigger", "sampling_frequency",
            "in_anglvel_sampling_frequency", "current_timestamp_clock",
        ]
        let untouched = ["name", "in_accel_x_raw", "scan_elements/in_accel_x_type", "in_accel_scale"]
        for name in written + untouched {
            let path = device + "/" + name
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: path, contents: Data("0\n".utf8), attributes: [.posixPermissions: 0o644]))
        }
        // The group "daemon" stands in for "iio"; /sys%p for the device folder.
        let script = command.replacingOccurrences(of: "/sys%p", with: device)
            .replacingOccurrences(of: "chgrp iio", with: "chgrp daemon")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        try process.run()
        await process.waitForExit()
        #expect(process.terminationStatus == 0)

        let daemonGroup = getgrnam("daemon").map { $0.pointee.gr_gid }
        for name in written {
            var info = stat()
            #expect(stat(device + "/" + name, &info) == 0)
            #expect(info.st_gid == daemonGroup, "\(name)")
            #expect(info.st_mode & 0o060 == 0o060, "\(name)")
        }
        for name in untouched {
            var info = stat()
            #expect(stat(device + "/" + name, &info) == 0)
            #expect(info.st_gid == 0, "\(name)")
            #expect(info.st_mode & 0o020 == 0, "\(name)")
        }
    }
}
