package import MotionAlgorithms
package import MotionCore
package import MotionTrace

/// The records `motionctl` prints and `motiond` streams for device motion, shakes, orientation changes, steps and
/// activity: one definition, so both give the same output (`Docs/CLI.md`, `Docs/Service.md`).
package enum OutputRecords {
    /// The attitude quaternion's columns: `qw,qx,qy,qz` (scalar first, device to reference).
    package static let quaternionColumns = ["qw", "qx", "qy", "qz"]
    /// Every device-motion column: the quaternion; roll, pitch, yaw (rad); rotation rate (rad/s); gravity and
    /// user acceleration (g); heading (degrees, −1 unknown); calibrated magnetic field (µT) and its accuracy
    /// (−1 none, 0 uncalibrated … 3 high).
    package static let deviceMotionColumns = quaternionColumns + [
        "roll", "pitch", "yaw", "rx", "ry", "rz", "gravx", "gravy", "gravz", "ux", "uy", "uz", "heading",
        "cmx", "cmy", "cmz", "maccuracy",
    ]

    /// Puts `motion` into a row of ``quaternionColumns`` (or ``deviceMotionColumns`` with `all`).
    package static func fill(_ values: inout [Double], with motion: DeviceMotion, all: Bool) {
        let q = motion.attitude.quaternion
        (values[0], values[1], values[2], values[3]) = (q.w, q.x, q.y, q.z)
        guard all else { return }
        (values[4], values[5], values[6]) = (motion.attitude.roll, motion.attitude.pitch, motion.attitude.yaw)
        (values[7], values[8], values[9]) = (motion.rotationRate.x, motion.rotationRate.y, motion.rotationRate.z)
        (values[10], values[11], values[12]) = (motion.gravity.x, motion.gravity.y, motion.gravity.z)
        (values[13], values[14], values[15]) =
            (motion.userAcceleration.x, motion.userAcceleration.y, motion.userAcceleration.z)
        values[16] = motion.heading
        let field = motion.magneticField?.field ?? MagneticField(x: 0, y: 0, z: 0)
        (values[17], values[18], values[19]) = (field.x, field.y, field.z)
        values[20] = Double(motion.magneticField?.accuracy.rawValue ?? -1)
    }

    /// A shake event's JSON fields after `type` and `t`: `phase`, `reason` (cancelled only), `axis`, `start` (s),
    /// `strokes`, `peak` (g).
    package static func fields(of event: ShakeEvent) -> [(String, EventValue)] {
        var fields: [(String, EventValue)] = [("phase", .string(event.phase.name))]
        if case .cancelled(let reason) = event.phase { fields.append(("reason", .string(reason.rawValue))) }
        fields += [
            ("axis", .string(event.axis.rawValue)), ("start", .number(event.startTime)),
            ("strokes", .number(Double(event.strokes))), ("peak", .number(event.peakAcceleration)),
        ]
        return fields
    }

    /// One `step` (or `total`) record: what `motionctl steps` prints as a CSV row or a JSON object, and what
    /// motiond's steps streams carry.
    package struct StepRecord {
        /// The step's time (the total's: the last sample's), in seconds.
        package var t: Double
        /// The running count at that step.
        package var steps: Int
        /// Steps per second, when stepping.
        package var cadence: Double?
        /// Metres walked at that step.
        package var distance: Double
        /// Seconds per metre, when stepping.
        package var pace: Double?

        package init(t: Double, steps: Int, cadence: Double?, distance: Double, pace: Double?) {
            (self.t, self.steps, self.cadence, self.distance, self.pace) = (t, steps, cadence, distance, pace)
        }

        /// The JSON fields after `type` and `t`: `steps`, `cadence` (when known), `distance`, `pace` (when known).
        package var fields: [(String, EventValue)] {
            var fields: [(String, EventValue)] = [("steps", .number(Double(steps)))]
            if let cadence { fields.append(("cadence", .number(cadence))) }
            fields.append(("distance", .number(distance)))
            if let pace { fields.append(("pace", .number(pace))) }
            return fields
        }
    }

    /// One record per step of `update`, oldest first, the distance at each step (each `update.stepLength` metres
    /// long). A confirmed run's steps all get the cadence, length and pace at its confirmation.
    package static func stepRecords(of update: PedometerUpdate) -> [StepRecord] {
        let count = update.stepTimes.count
        return (0..<count).map { i in
            let later = count - 1 - i
            return StepRecord(
                t: update.stepTimes[i], steps: update.data.numberOfSteps - later, cadence: update.data.currentCadence,
                distance: update.data.distance - Double(later) * update.stepLength, pace: update.data.currentPace)
        }
    }

    /// An activity's JSON fields after `type` (`activity`) and `t`: `activity` (stationary, walking, running,
    /// unknown) and `confidence` (low, medium, high).
    package static func fields(of activity: MotionActivity) -> [(String, EventValue)] {
        [("activity", .string(activity.kind.rawValue)), ("confidence", .string(activity.confidence.rawValue))]
    }

    /// What an orientation change reports: with `iioSensorProxyNames`, an `orientation` report
    /// (iio-sensor-proxy's names) and a `tilt` report, each only when it changed; otherwise one `orientation`
    /// report with UIKit's names when the device orientation changed.
    package static func reports(
        of change: DeviceOrientationChange, iioSensorProxyNames: Bool
    ) -> [(type: String, label: String, value: String, previous: String)] {
        var reports: [(type: String, label: String, value: String, previous: String)] = []
        if iioSensorProxyNames {
            if change.iioSensorProxyOrientationChanged {
                reports.append(
                    (
                        "orientation", "Accelerometer orientation changed", change.iioSensorProxyOrientation.rawValue,
                        change.previousIIOSensorProxyOrientation.rawValue
                    ))
            }
            if change.tiltChanged {
                reports.append(("tilt", "Tilt changed", change.tilt.rawValue, change.previousTilt.rawValue))
            }
        } else if change.orientationChanged {
            reports.append(
                (
                    "orientation", "Device orientation changed", change.orientation.description,
                    change.previousOrientation.description
                ))
        }
        return reports
    }
}
