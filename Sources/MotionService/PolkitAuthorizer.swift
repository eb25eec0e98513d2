import MotionCore
import MotionDBus

/// Whether motiond asks polkit who may claim sensors and open streams.
package enum PolkitUse: String, Sendable, CaseIterable {
    /// Ask polkit when it runs; without it, the D-Bus policy alone decides (as Debian's iio-sensor-proxy 3.0).
    case auto
    /// Always ask; without polkit every claim and stream is refused.
    case on
    /// Never ask: the D-Bus policy and the high-rate group decide.
    case off
}

/// Asks polkit (`org.freedesktop.PolicyKit1.Authority.CheckAuthorization`) whether a caller may do an action,
/// without blocking the D-Bus loop, and without interaction (a caller who would have to authenticate is refused).
final class PolkitAuthorizer {
    /// Opening a stream on `org.swiftmotion.Motion1`: by default the active session's user (iio-sensor-proxy's
    /// `net.hadess.SensorProxy.claim-sensor` defaults).
    static let claimSensor = "org.swiftmotion.Motion1.claim-sensor"
    /// Claiming a sensor through `net.hadess.SensorProxy`: iio-sensor-proxy 3.4+'s own action, which the
    /// distributions' polkit rules name (same defaults; declared in Support/polkit too, for systems without it).
    static let sensorProxyClaimSensor = "net.hadess.SensorProxy.claim-sensor"
    /// Raw samples or device motion faster than 25 Hz, for a caller outside the high-rate group: by default an
    /// administrator only.
    static let highRate = "org.swiftmotion.Motion1.high-rate"

    enum Decision {
        case allowed
        case denied(String)
        /// polkit is not running (or answered nothing): what the mode makes of it is for the caller.
        case unavailable(String)
    }

    let connection: DBusConnection
    let use: PolkitUse
    let log: @Sendable (String) -> Void
    private var reportedUnavailable = false

    init(connection: DBusConnection, use: PolkitUse, log: @escaping @Sendable (String) -> Void) {
        self.connection = connection
        self.use = use
        self.log = log
    }

    /// Asks polkit about `action` for the bus client `sender`; `completion` runs on the loop's thread.
    func check(_ action: String, for sender: String, _ completion: @escaping (Decision) -> Void) {
        guard use != .off else {
            completion(.unavailable("polkit is not asked (--polkit off)"))
            return
        }
        let subject = DBusValue.structure([
            .string("system-bus-name"), .properties([("name", .string(sender))]),
        ])
        connection.callAsync(
            destination: "org.freedesktop.PolicyKit1", path: "/org/freedesktop/PolicyKit1/Authority",
            interface: "org.freedesktop.PolicyKit1.Authority", member: "CheckAuthorization",
            arguments: [subject, .string(action), .array(elementSignature: "{ss}", []), .uint32(0), .string("")],
            timeout: 10
        ) { [weak self] result in
            switch result {
            case .success(let values):
                guard case .structure(let fields)? = values.first, case .boolean(let authorized)? = fields.first else {
                    completion(.denied("polkit's answer for \(action) cannot be read: \(values)"))
                    return
                }
                completion(authorized ? .allowed : .denied("Not Authorized: \(action)"))
            case .failure(let error) where error.code == .deviceNotFound:
                if let self, !self.reportedUnavailable {
                    self.reportedUnavailable = true
                    self.log("polkit is not running: \(self.use == .on ? "refusing" : "allowing") what it would decide")
                }
                completion(.unavailable("polkit is not running"))
            case .failure(let error):
                completion(.denied("polkit could not decide on \(action): \(error.message)"))
            }
        }
    }

    /// A claim or stream: `nil` when allowed, else the error for the caller. Without polkit: allowed in `auto`
    /// mode, refused in `on` mode. `action` is ``claimSensor`` (org.swiftmotion.Motion1) or
    /// ``sensorProxyClaimSensor`` (net.hadess.SensorProxy).
    func authorizeClaim(
        for sender: String, action: String = claimSensor, _ completion: @escaping (DBusErrorReply?) -> Void
    ) {
        check(action, for: sender) { [use] decision in
            switch decision {
            case .allowed: completion(nil)
            case .denied(let reason):
                completion(.accessDenied(
                    "\(reason): by default only the user of the active local session may read the motion sensors "
                        + "(polkit action \(action))"))
            case .unavailable(let reason):
                completion(use == .on ? .accessDenied("\(reason), and motiond runs with --polkit on") : nil)
            }
        }
    }
}
