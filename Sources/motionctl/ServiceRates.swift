import Motion
import MotionClient
import MotionCore
import MotionProtocol

/// What the `--service` commands ask of the motion service: each the rate it needs, never more, so a command
/// given no interval neither raises the shared device to its highest rate nor needs the high-rate right it did
/// not ask for (`Docs/CLI.md`, "Through the motion service").
enum ServiceRates {
    /// The shortest interval of raw samples everyone may ask (the service's `HighRateInterval`, 25 Hz); shorter
    /// ones need root, the group `motion` or polkit's high-rate action (`Docs/Service.md`, "Rate rights").
    static let unprivilegedInterval = Motion1Interface.highRateInterval

    /// `orientation`: 25 Hz. The classifier low-passes at 1 Hz (`orientation.cutoff`) and waits a settle time of
    /// tenths of a second, so 25 samples a second are far more than it uses, and everyone may ask them.
    static let orientationInterval = unprivilegedInterval

    /// `shake`: 50 Hz, the slowest rate the detector is validated at (`Docs/MotionEvents.md`: the same outcomes at
    /// 50, 100 and 200 Hz). Its band reaches 10 Hz (strokes of 50 ms), which 25 Hz samples twice per stroke at most.
    static let shakeInterval = 0.02

    /// `steps` and `activity`: 50 Hz at least. The step detector and the activity classifier are validated from
    /// 25 Hz in simulation, but on the real dev walks 25 Hz costs accuracy (`Docs/Pedometer.md`, "Lower sample
    /// rates"); a device left at its own rate may run at 10 Hz, too slow for them. (`MotionManager`'s
    /// subscriptions ask the same of a device, and 25 Hz of the service.) Through the service 50 Hz needs the
    /// high-rate right: `atPedometerRate`.
    static let pedometerInterval = 0.02

    /// Runs `attempt` with the interval to ask a live source for steps or activity: `pedometerInterval`. When the
    /// service refuses it for want of the high-rate right, says so on stderr and runs `attempt` again at 25 Hz,
    /// which everyone may ask and the pedometer is validated at, less accurately. `attempt` must write nothing
    /// before its first sample.
    static func atPedometerRate(_ attempt: (Double) async throws(MotionError) -> Void) async throws(MotionError) {
        try await at(
            pedometerInterval, reason: "steps and activity are most accurate from \(hertz(pedometerInterval)) Hz",
            hint: " (Docs/Pedometer.md, \"Lower sample rates\")", attempt)
    }

    /// Runs `attempt` with the interval to ask the service for `sensors` (their device's current period, or 25 Hz
    /// when the service does not say). When the service refuses that rate for want of the high-rate right, says
    /// so on stderr (adding `hint`) and runs `attempt` again at 25 Hz, which everyone may ask: a command given no
    /// interval works for every user. `attempt` must write nothing before its first sample (its writer starts then).
    static func atCurrentRate(
        of sensors: SensorSet, hint: String = "", _ attempt: (Double) async throws(MotionError) -> Void
    ) async throws(MotionError) {
        let interval = MotionServiceQuery.currentDeviceInterval(for: sensors) ?? unprivilegedInterval
        try await at(interval, reason: "the device runs at \(hertz(interval)) Hz", hint: hint, attempt)
    }

    /// Runs `attempt` at `interval`; when the service refuses a rate above 25 Hz for want of its high-rate right,
    /// notes on stderr why that rate was wanted (`reason`, then `hint`) and runs `attempt` again at 25 Hz.
    private static func at(
        _ interval: Double, reason: String, hint: String, _ attempt: (Double) async throws(MotionError) -> Void
    ) async throws(MotionError) {
        do {
            try await attempt(interval)
        } catch where error.code == .permissionDenied && interval < unprivilegedInterval
            && error.message.contains(highRateAction)
        {
            printToStandardError(
                "motionctl: note: \(reason), faster than the \(hertz(unprivilegedInterval)) Hz the motion service "
                    + "gives without its high-rate right (the group motion, Docs/Service.md); reading at "
                    + "\(hertz(unprivilegedInterval)) Hz" + hint)
            try await attempt(unprivilegedInterval)
        }
    }

    /// The polkit action the service names when it refuses a rate for want of the high-rate right (and only
    /// then): any other refusal (no right to open streams at all) is reported as it is.
    static let highRateAction = Motion1Interface.highRateAction

    /// `100`, `12.5`: the rate of `interval`, without trailing zeros.
    static func hertz(_ interval: Double) -> String {
        let rate = (1 / interval * 1000).rounded() / 1000
        return rate == rate.rounded() ? "\(Int(rate))" : "\(rate)"
    }
}
