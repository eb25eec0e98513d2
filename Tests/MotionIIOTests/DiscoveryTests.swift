import IIOTestbed
import MotionCore
import MotionIIO
import Testing

/// Discovery through libudev against emulated devices (umockdev testbeds; serialized, one testbed at a time).
@Suite(.serialized, .requires(.umockdevPreload))
struct DiscoveryTests {
    /// An empty ACCEL_MOUNT_MATRIX is the identity and ends the search, as in iio-sensor-proxy
    /// (setup_mount_matrix parses it; parse_mount_matrix("") is the identity, test-mount-matrix.c).
    @Test func anEmptyUdevMatrixIsTheIdentity() async throws {
        try await Testbed.run { testbed in
            var device = EmulatedDevice.lis3dh()
            device.setProperty("ACCEL_MOUNT_MATRIX", "")
            device.set("in_accel_mount_matrix", "0, 1, 0; 1, 0, 0; 0, 0, 1")
            try testbed.add(device)
            let accel = try #require(try IIODeviceDiscovery.devices().first?.sensor(.accelerometer))
            #expect(accel.mountMatrix == Sourced(.identity, from: .udevProperty("ACCEL_MOUNT_MATRIX")))
        }
    }

    /// A bad attribute the three axes share is one warning, not one per axis.
    @Test func aSharedBadAttributeIsWarnedAboutOnce() async throws {
        try await Testbed.run { testbed in
            var device = EmulatedDevice.lis3dh()
            device.set("in_accel_scale", "abc")
            try testbed.add(device)
            let found = try #require(try IIODeviceDiscovery.devices().first)
            #expect(found.warnings == ["ignored sysfs in_accel_scale = \"abc\": a scale must be a non-zero number"])
            #expect(found.sensor(.accelerometer)?.scale.map(\.source) == Array(repeating: .default, count: 3))
        }
    }

    @Test func describesTheEmulatedAccelerometer() async throws {
        try await Testbed.run { testbed in
            try testbed.add(.lis3dh())
            try testbed.add(.lis3dhTrigger)
            let result = try IIODeviceDiscovery.scan()
            #expect(result.skipped.isEmpty)  // the trigger is not listed
            let device = try #require(result.devices.first)
            #expect(result.devices.count == 1)
            #expect(device.id == "iio:device0")
            #expect(device.name == "lis3dh")
            #expect(device.sysfsPath == "/sys/devices/platform/lis3dh-accel/iio:device0")
            #expect(device.deviceNode == "/dev/iio:device0")
            #expect(device.sensorSet == .accelerometer)
            #expect(device.location == Sourced(.display, from: .default))
            let accel = try #require(device.sensor(.accelerometer))
            #expect(accel.mountMatrix == Sourced(.identity, from: .default))
            #expect(accel.scale == Array(repeating: Sourced(0.009576, from: .sysfsAttribute("in_accel_scale")), count: 3))
            #expect(accel.offset == Array(repeating: Sourced(0, from: .default), count: 3))
            #expect(accel.samplingFrequency == Sourced(100, from: .sysfsAttribute("sampling_frequency")))
            #expect(
                accel.availableSamplingFrequencies
                    == Sourced(.list([1, 10, 25, 50, 100, 200, 400]), from: .sysfsAttribute("sampling_frequency_available")))
            #expect(accel.scanChannels?.map(\.id) == ["accel_x", "accel_y", "accel_z"])
            #expect(accel.scanChannels?.map(\.index) == [0, 1, 2])
            #expect(accel.scanChannels?.first?.type.description == "le:s16/16>>0")
            #expect(accel.hasRawAttributes)
            let buffer = try #require(device.buffer)
            #expect(buffer.timestamp == ScanChannel(id: "timestamp", index: 3, type: ScanElementType(parsing: "le:s64/64>>0")!))
            #expect(buffer.acceptsTrigger && buffer.currentTrigger == nil && buffer.hasWatermark)
            #expect(device.triggers == ["lis3dh-trigger"])
            #expect(device.timestampClock == "realtime")
            #expect(device.canBuffer)
            #expect(device.warnings.isEmpty)
        }
    }

    /// ACCEL_MOUNT_MATRIX, then sysfs mount_matrix, in_accel_mount_matrix, in_mount_matrix: a zero row or
    /// garbage is skipped with a warning naming the source, and the next source is used.
    @Test func mountMatrixFallsThroughRejectedSources() async throws {
        try await Testbed.run { testbed in
            var device = EmulatedDevice.lis3dh()
            device.setProperty("ACCEL_MOUNT_MATRIX", "0, 1, 0; 1, 0, 0; 0, 0, 0")
            device.set("mount_matrix", "garbage")
            device.set("in_accel_mount_matrix", "0, -1, 0; 1, 0, 0; 0, 0, 1")
            device.set("in_mount_matrix", "1, 0, 0; 0, 1, 0; 0, 0, 1")
            try testbed.add(device)
            let found = try #require(try IIODeviceDiscovery.devices().first)
            let matrix = try #require(found.sensor(.accelerometer)?.mountMatrix)
            #expect(matrix.source == .sysfsAttribute("in_accel_mount_matrix"))
            #expect(matrix.value == MountMatrix(xRow: [0, -1, 0], yRow: [1, 0, 0], zRow: [0, 0, 1]))
            #expect(found.warnings.count == 2)
            #expect(found.warnings.first?.contains("udev ACCEL_MOUNT_MATRIX") == true)
            #expect(found.warnings.first?.contains("all-zero row for axis z") == true)
            #expect(found.warnings.last?.contains("sysfs mount_matrix") == true)
        }
    }

    @Test func udevPropertyWinsOverSysfs() async throws {
        try await Testbed.run { testbed in
            var device = EmulatedDevice.lis3dh()
            device.setProperty("ACCEL_MOUNT_MATRIX", "0, 1, 0; 1, 0, 0; 0, 0, 1")
            device.set("in_mount_matrix", "-1, 0, 0; 0, -1, 0; 0, 0, 1")
            try testbed.add(device)
            let found = try #require(try IIODeviceDiscovery.devices().first)
            #expect(found.sensor(.accelerometer)?.mountMatrix.source == .udevProperty("ACCEL_MOUNT_MATRIX"))
            #expect(found.warnings.isEmpty)
        }
    }

    /// A combined IMU: each kind gets its own matrix sources (ACCEL_MOUNT_MATRIX is for accelerometers only),
    /// scales per axis with fallbacks, offsets, and per-kind sampling frequencies.
    @Test func describesACombinedIMU() async throws {
        try await Testbed.run { testbed in
            var imu = EmulatedDevice.iio(name: "bmi160", number: 0)
            imu.addSensor("accel", raw: (10, 20, 30), scale: "0.0005", scanType: "le:s16/16>>0", firstIndex: 0)
            imu.addSensor("anglvel", raw: (1, 2, 3), scale: "0.001065", scanType: "le:s16/16>>0", firstIndex: 3)
            imu.addSensor("magn", raw: (4, 5, 6), scale: "0.0003")
            imu.set("in_accel_x_scale", "0.0006")
            imu.set("in_accel_y_scale", "0")  // a kernel bug: ignored with a warning
            imu.set("in_anglvel_offset", "-2")
            imu.set("in_anglvel_z_offset", "5")
            imu.set("in_accel_sampling_frequency", "100")
            imu.set("in_accel_sampling_frequency_available", "25 50 100 200")
            imu.set("in_anglvel_sampling_frequency", "200")
            imu.setProperty("ACCEL_MOUNT_MATRIX", "0, 1, 0; 1, 0, 0; 0, 0, 1")
            imu.set("in_anglvel_mount_matrix", "-1, 0, 0; 0, -1, 0; 0, 0, 1")
            imu.set("in_mount_matrix", "1, 0, 0; 0, 0, 1; 0, 1, 0")
            imu.addChannel("timestamp", scan: (6, "le:s64/64>>0"))
            imu.addBuffer(trigger: nil)
            try testbed.add(imu)
            let device = try #require(try IIODeviceDiscovery.devices().first)
            #expect(device.sensorSet == .all)
            #expect(device.sensors.map(\.kind) == [.accelerometer, .gyroscope, .magnetometer])
            let accel = try #require(device.sensor(.accelerometer))
            let gyro = try #require(device.sensor(.gyroscope))
            let magn = try #require(device.sensor(.magnetometer))
            #expect(accel.mountMatrix.source == .udevProperty("ACCEL_MOUNT_MATRIX"))
            #expect(gyro.mountMatrix.source == .sysfsAttribute("in_anglvel_mount_matrix"))
            #expect(magn.mountMatrix.source == .sysfsAttribute("in_mount_matrix"))
            #expect(accel.scale.map(\.value) == [0.0006, 0.0005, 0.0005])
            #expect(accel.scale.map(\.source.name) == ["in_accel_x_scale", "in_accel_scale", "in_accel_scale"])
            #expect(device.warnings == ["ignored sysfs in_accel_y_scale = \"0\": a scale must be a non-zero number"])
            #expect(gyro.offset.map(\.value) == [-2, -2, 5])
            #expect(gyro.offset.map(\.source.name) == ["in_anglvel_offset", "in_anglvel_offset", "in_anglvel_z_offset"])
            #expect(accel.samplingFrequency == Sourced(100, from: .sysfsAttribute("in_accel_sampling_frequency")))
            #expect(gyro.samplingFrequency == Sourced(200, from: .sysfsAttribute("in_anglvel_sampling_frequency")))
            #expect(magn.samplingFrequency == nil)
            #expect(magn.scanChannels == nil && magn.hasRawAttributes)
            #expect(gyro.scanChannels?.map(\.index) == [3, 4, 5])
            #expect(device.buffer?.acceptsTrigger == false)
            #expect(!device.canBuffer)  // the magnetometer can only be polled
        }
    }

    @Test func locationSourcesAndBaseAccelerometers() async throws {
        try await Testbed.run { testbed in
            var base = EmulatedDevice.iio(name: "kxcj91008", number: 0, node: nil)
            base.addSensor("accel", raw: (0, 0, 256), scale: "0.038")
            base.setProperty("ACCEL_LOCATION", "base")
            try testbed.add(base)
            var labelled = EmulatedDevice.iio(name: "bma250", number: 1, node: nil)
            labelled.addSensor("accel", raw: (0, 0, 256), scale: "0.038")
            labelled.setProperty("ACCEL_LOCATION", "ceiling")  // not a location: warning, then the label
            labelled.set("label", "accel-base")
            try testbed.add(labelled)
            var lid = EmulatedDevice.iio(name: "bma250", number: 2, node: nil)
            lid.addSensor("accel", raw: (0, 0, 256), scale: "0.038")
            lid.set("label", "accel-camera")  // a label, but not a location
            lid.set("location", "lid")
            try testbed.add(lid)

            let result = try IIODeviceDiscovery.scan()
            #expect(result.devices.map(\.id) == ["iio:device2"])
            #expect(result.devices.first?.location == Sourced(.display, from: .sysfsAttribute("location")))
            #expect(result.skipped.map(\.id) == ["iio:device0", "iio:device1"])
            #expect(result.skipped.first?.reason.contains("base accelerometer (udev ACCEL_LOCATION)") == true)

            let all = try IIODeviceDiscovery.scan(includeBase: true)
            #expect(all.devices.map(\.id) == ["iio:device0", "iio:device1", "iio:device2"])
            #expect(all.devices[0].location == Sourced(.base, from: .udevProperty("ACCEL_LOCATION")))
            #expect(all.devices[1].location == Sourced(.base, from: .sysfsAttribute("label")))
            #expect(all.devices[1].warnings == ["ignored udev ACCEL_LOCATION = \"ceiling\": expected display, lid or base"])
            #expect(all.devices[0].buffer == nil && !all.devices[0].canBuffer)
        }
    }

    @Test func skipsTriggersAndNonMotionDevicesAndOrdersByNumber() async throws {
        try await Testbed.run { testbed in
            var light = EmulatedDevice.iio(name: "als", number: 1, node: nil)
            light.set("in_illuminance_raw", "120")
            try testbed.add(light)
            var ten = EmulatedDevice.iio(name: "gyro10", number: 10, node: nil)
            ten.addSensor("anglvel", raw: (0, 0, 0), scale: "0.001")
            try testbed.add(ten)
            var two = EmulatedDevice.iio(name: "accel2", number: 2, node: nil)
            two.addSensor("accel", raw: (0, 0, 0), scale: "0.01")
            try testbed.add(two)
            var partial = EmulatedDevice.iio(name: "twoaxis", number: 3, node: nil)
            partial.addChannel("accel_x", raw: 1)
            partial.addChannel("accel_y", raw: 1)
            try testbed.add(partial)
            try testbed.add(.trigger(name: "gyro10-dev10", number: 0, parent: "/devices/platform/x"))

            let result = try IIODeviceDiscovery.scan()
            #expect(result.devices.map(\.id) == ["iio:device2", "iio:device10"])
            #expect(result.devices.last?.triggers == ["gyro10-dev10"])
            #expect(result.skipped.map(\.id) == ["iio:device1", "iio:device3"])
            #expect(result.skipped.allSatisfy { $0.reason == "no accelerometer, gyroscope or magnetometer channels" })
        }
    }

    @Test func selectsDevices() async throws {
        try await Testbed.run { testbed in
            var accel = EmulatedDevice.iio(name: "accel0", number: 0)
            accel.addSensor("accel", raw: (0, 0, 0), scale: "0.01", scanType: "le:s16/16>>0")
            accel.addBuffer(trigger: nil)
            try testbed.add(accel)
            var gyro = EmulatedDevice.iio(name: "gyro1", number: 1, node: nil)
            gyro.addSensor("anglvel", raw: (0, 0, 0), scale: "0.001")
            try testbed.add(gyro)
            var imu = EmulatedDevice.iio(name: "imu2", number: 2, node: nil)
            imu.addSensor("accel", raw: (0, 0, 0), scale: "0.01")
            imu.addSensor("magn", raw: (0, 0, 0), scale: "0.001")
            imu.set("label", "accel-display")
            try testbed.add(imu)
            let devices = try IIODeviceDiscovery.devices()

            // auto: the device with the most wanted sensors first, then one device per missing sensor.
            let auto = DeviceSelector.automatic.sources(from: devices)
            #expect(auto.map(\.device.id) == ["iio:device1", "iio:device2"])
            #expect(auto.map(\.sensors) == [[.gyroscope], [.accelerometer, .magnetometer]])
            let accelOnly = DeviceSelector.automatic.sources(from: devices, sensors: [.accelerometer, .gyroscope])
            #expect(accelOnly.map(\.device.id) == ["iio:device0", "iio:device1"])

            for text in ["iio:device1", "gyro1", "/sys/devices/platform/gyro1-1/iio:device1", "/sys/bus/iio/devices/iio:device1"] {
                #expect(DeviceSelector(text).sources(from: devices).map(\.device.id) == ["iio:device1"], "\(text)")
            }
            #expect(DeviceSelector("/dev/iio:device0").sources(from: devices).map(\.device.id) == ["iio:device0"])
            #expect(DeviceSelector("accel-display").sources(from: devices).map(\.device.id) == ["iio:device2"])
            #expect(DeviceSelector("nothing").sources(from: devices).isEmpty)
            #expect(DeviceSelector("gyro1").sources(from: devices, sensors: .accelerometer).isEmpty)
        }
    }
}
