import IIOTestbed
import MotionCore
import MotionIIO
import Testing

/// What a session task saw, step by step, for the test to follow from outside.
private final class Steps: Sendable {
    private let steps = LockedState<[String]>([])
    func append(_ step: String) { steps.withLock { $0.append(step) } }
    var all: [String] { steps.withLock { $0 } }
}

/// Suspends until `condition` holds, for at most `limit` seconds (a hang guard, not a speed check).
private func eventually(limit: Double = 30, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(limit)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

/// `IIODeviceSession` against emulated devices (umockdev; serialized): the lifecycle events, the bounded wait
/// for a device and cancellation while waiting.
@Suite(.serialized, .requires(.umockdevPreload))
struct DeviceSessionTests {
    @Test func boundedWaitEndsWithDisconnected() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh().bufferOnly)
            let steps = Steps()
            let task = Task { () async -> MotionError? in
                do throws(MotionError) {
                    let session = try IIODeviceSession(selector: .automatic, reconnect: .waitForDevice(upTo: 0.5))
                    guard case .event(.opened(let details)) = try await session.next() else { return nil }
                    steps.append("opened \(details.map(\.device.id))")
                    while true {
                        switch try await session.next() {
                        case .samples(let batch): steps.append("samples \(batch.count)")
                        case .event(.disconnected(let disconnection)):
                            steps.append("disconnected \(disconnection.device?.id ?? "?")")
                        case .event(let event): steps.append("\(event)")
                        }
                    }
                } catch {
                    return error
                }
            }
            #expect(await eventually { testbed.attribute(path, "buffer/enable") == "1" })
            try testbed.feed("/dev/iio:device0", lis3dhEncoder.encode(rows: fixtureRows(4)))
            #expect(await eventually { steps.all.contains("samples 4") })
            testbed.remove(path)
            #expect(await eventually(limit: 20) { steps.all.contains("disconnected iio:device0") })
            let watchdog = Task {
                try await Task.sleep(for: .seconds(20))
                task.cancel()  // a wait that never ends fails the test as cancelled instead of hanging
            }
            let error = await task.value
            watchdog.cancel()
            #expect(error?.code == .disconnected, "\(String(describing: error))")
            #expect(error?.message.contains("came back within 0.5 s") == true, "\(String(describing: error))")
            // A device still being removed may be found and lost once more before the wait: a second disconnection.
            #expect(Array(steps.all.prefix(3)) == ["opened [\"iio:device0\"]", "samples 4", "disconnected iio:device0"])
            #expect(steps.all.dropFirst(3).allSatisfy { $0 == "disconnected iio:device0" }, "\(steps.all)")
        }
    }

    @Test func cancellingTheTaskEndsTheWaitForADevice() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh().bufferOnly)
            let steps = Steps()
            let task = Task { () async -> MotionError? in
                do throws(MotionError) {
                    let session = try IIODeviceSession(selector: .automatic)  // waits without a limit
                    while true {
                        if case .event(let event) = try await session.next() { steps.append("\(event)") }
                    }
                } catch {
                    return error
                }
            }
            #expect(await eventually { testbed.attribute(path, "buffer/enable") == "1" })
            testbed.remove(path)
            #expect(await eventually(limit: 20) { steps.all.count >= 2 })  // opened, disconnected
            task.cancel()
            let ended = Steps()
            let waiter = Task {
                let error = await task.value
                ended.append(error.map { "\($0.code)" } ?? "nil")
            }
            #expect(await eventually(limit: 10) { !ended.all.isEmpty }, "the session still waits for a device")
            #expect(ended.all == ["cancelled"])
            waiter.cancel()
            task.cancel()
        }
    }

    @Test func endOnDisconnectThrowsAndNoMatchIsReportedAtOnce() async throws {
        try await Testbed.run { testbed in
            let missing = try IIODeviceSession(selector: .matching("bmi160"))
            await #expect(throws: MotionError.self) { _ = try await missing.next() }

            let path = try testbed.add(.lis3dh().bufferOnly)
            let session = try IIODeviceSession(selector: .matching("lis3dh"), reconnect: .endOnDisconnect)
            #expect(session.monitorFailure == nil)
            guard case .event(.opened) = try await session.next() else {
                Issue.record("expected opened")
                return
            }
            #expect(testbed.attribute(path, "buffer/enable") == "1")
            testbed.remove(path)
            let error = await #expect(throws: MotionError.self) { _ = try await session.next() }
            #expect(error?.code == .disconnected)
            #expect(session.details.map(\.device.id) == ["iio:device0"], "the last devices stay described")
        }
    }

    /// Without the capture's own removal watch (`watchForRemoval: false`, which reaches the capture), a polled
    /// device is found gone by a failed sysfs read: the disconnection still names the device, from the error's
    /// location.
    @Test func aPolledDeviceThatVanishesIsNamed() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh(node: nil))  // no node: polled
            let session = try IIODeviceSession(
                selector: .automatic, configuration: .init(rate: 100, watchForRemoval: false),
                reconnect: .waitForDevice(upTo: 0.2))
            guard case .event(.opened(let details)) = try await session.next() else {
                Issue.record("expected opened")
                return
            }
            #expect(details.map(\.mode) == [.polled])
            guard case .samples = try await session.next() else {
                Issue.record("expected samples")
                return
            }
            testbed.remove(path)
            var disconnection: IIODeviceEvent.Disconnection?
            for _ in 0..<1000 {  // 10 s of polls at 100 Hz: a hang guard
                if case .event(.disconnected(let found)) = try await session.next() {
                    disconnection = found
                    break
                }
            }
            #expect(disconnection?.device?.id == "iio:device0")
            #expect(disconnection?.error.location?.file?.hasPrefix(path + "/in_accel_") == true)
            let error = await #expect(throws: MotionError.self) { _ = try await session.next() }
            #expect(error?.code == .disconnected)
        }
    }

    /// A device that keeps failing while present (here: its data file runs out at each opening) is reopened
    /// after 0.25 s, then 0.5 s, 1 s, … (at most 30 s), not in a loop as fast as it fails.
    @Test func aFailingDeviceIsRetriedWithBackoff() async throws {
        #expect((1...9).map(IIODeviceSession.retryDelay(failures:)) == [0.25, 0.5, 1, 2, 4, 8, 16, 30, 30])
        try await Testbed.run { testbed in
            var device = EmulatedDevice.lis3dh(node: .file([UInt8](repeating: 0, count: 16 * 4))).bufferOnly
            device.set("current_timestamp_clock", "boottime")
            try testbed.add(device)
            try testbed.add(.lis3dhTrigger)
            let steps = Steps()
            let task = Task {
                do throws(MotionError) {
                    let session = try IIODeviceSession(selector: .automatic)
                    while true {
                        if case .event(let event) = try await session.next() { steps.append("\(event)") }
                    }
                } catch {
                    steps.append("error \(error)")
                }
            }
            // Three failures and reopenings take 0.25 + 0.5 + 1 s of waiting at least; without the backoff,
            // hundreds of them happen in that time.
            #expect(await eventually { steps.all.filter { $0.hasSuffix("connected") && !$0.contains("stopped") }.count >= 3 })
            let watched = ContinuousClock.now
            try await Task.sleep(for: .seconds(1.5))
            task.cancel()
            _ = await task.value
            let reconnections = steps.all.filter { $0.hasSuffix(" connected") }.count
            #expect(reconnections <= 4, "\(reconnections) reconnections: \(steps.all)")
            _ = watched
        }
    }

    @Test func invalidConfigurationIsRejected() {
        #expect(throws: MotionError.self) {
            _ = try IIODeviceSession(selector: .automatic, configuration: .init(timeout: -1))
        }
        #expect(ReconnectPolicy.waitForDevice(upTo: 2).waitLimit == 2)
        #expect(!ReconnectPolicy.endOnDisconnect.reconnects && ReconnectPolicy.waitForDevice.reconnects)
    }
}
