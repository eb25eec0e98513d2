// libFuzzer entry point for the calibration file motiond restores at start, built by Fuzz/run.sh together with the
// MotionCore, MotionAlgorithms and MotionTrace sources, CalibrationFile.swift and RealModule as one module.
//
// Each input is the file's bytes, given to `CalibrationFile.decode` (the JSON decoding and the check of every
// value that `load` does after its bounded read). It must either refuse the input with `malformedState` or accept
// a state that passes its own check again, that saves (`encode`) and reads back to the same bytes, and whose
// learned values are finite; a filter started from it, and one restored from it, then take a few samples with
// finite outputs (an accepted state cannot crash or poison device motion). Plus no crash, leak-free memory access
// (ASan) and no timeout.

#if canImport(Glibc)
    import Glibc
#endif

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        // To standard error, unbuffered: a print would still sit in stdout's buffer at the abort.
        fputs("fuzz invariant violated: \(message())\n", stderr)
        abort()
    }
}

/// A second of still and turning samples at 100 Hz, with all three sensors.
private let samples: [MotionSample] = (0..<100).map { i in
    let t = 1000 + Double(i) / 100
    let angle = Double(i) / 30
    return MotionSample(
        timestamp: t, acceleration: Acceleration(x: 0.01, y: -0.02, z: -1),
        rotationRate: RotationRate(x: 0.3, y: -0.1, z: i < 50 ? 0 : 1.5),
        magneticField: MagneticField(x: 20 * cos(angle) + 30, y: 20 * sin(angle) - 10, z: -40))
}

private func isFinite(_ q: Quaternion<Double>) -> Bool { q.w.isFinite && q.x.isFinite && q.y.isFinite && q.z.isFinite }

private func run(_ filter: inout DeviceMotionFilter, _ label: String) {
    for sample in samples {
        guard let motion = filter.update(sample) else { continue }
        check(isFinite(motion.attitude.quaternion), "\(label): non-finite attitude \(motion.attitude.quaternion)")
        check(motion.gravity.isFinite && motion.userAcceleration.isFinite && motion.rotationRate.isFinite,
              "\(label): non-finite device motion \(motion)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzState(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = [UInt8](UnsafeBufferPointer(start: data, count: size))
    let state: DeviceMotionFilter.State
    do {
        state = try CalibrationFile.decode(bytes, from: "fuzz")
    } catch {
        check(error.code == .malformedState && error.location?.file == "fuzz", "unexpected refusal: \(error)")
        return 0
    }
    do {
        try state.validate()
    } catch {
        check(false, "an accepted state fails its check: \(error)")
    }
    let bias = state.gyroscopeBias
    check(bias.x.isFinite && bias.y.isFinite && bias.z.isFinite, "non-finite gyroscope bias \(bias)")
    check(state.gyroscopeBiasUncertainty.isFinite, "non-finite bias uncertainty \(state.gyroscopeBiasUncertainty)")
    let offset = state.magnetometerBias
    check(offset.x.isFinite && offset.y.isFinite && offset.z.isFinite, "non-finite magnetometer bias \(offset)")
    do {
        let encoded = try CalibrationFile.encode(state, for: "fuzz")
        let again = try CalibrationFile.decode(encoded, from: "fuzz")
        check(try CalibrationFile.encode(again, for: "fuzz") == encoded, "the state does not read back the same")
    } catch {
        check(false, "an accepted state does not save and read back: \(error)")
    }
    var calibrated = DeviceMotionFilter(referenceFrame: .xMagneticNorthZVertical, calibratedFrom: state)
    run(&calibrated, "calibrated from the state")
    var restored = DeviceMotionFilter(restoring: state)
    run(&restored, "restored from the state")
    return 0
}
