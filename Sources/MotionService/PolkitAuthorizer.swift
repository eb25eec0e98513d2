import MotionCore
import MotionDBus
import MotionProtocol

/// Whether motiond asks polkit who may claim sensors and open streams.
package enum PolkitUse: String, Sendable, CaseIterable {
    /// Ask polkit when it runs; on a system without it, the D-Bus policy alone decides (as Debian's
    /// iio-sensor-proxy 3.0). Once polkit has answered, a polkit that stops answering refuses (it is restarting).
    case auto
    /// Always ask; without polkit every claim and stream is refused.
    case on
    /// Never ask: the D-Bus policy and the high-rate group decide.
    case off
}

/// Asks polkit (`org.freedesktop.PolicyKit1.Authority.CheckAuthorization`) whether a caller may do an action,
/// without blocking the D-Bus loop, and without interaction (a caller who would have to authenticate is refused).
///
/// No client can jam it: the same question from the same client while one is pending waits on that one
/// (at most ``ServiceLimits/callsPerPendingCheck`` calls), and distinct pending questions are bounded per client,
/// per user and in all (``ServiceLimits``); a question over a bound is refused at once with `LimitsExceeded`. One
/// user's flood thus fills their own share, not the bus's 128 pending replies that everyone's checks need.
final class PolkitAuthorizer {
    /// Opening a stream on `org.swiftmotion.Motion1`: by default the active session's user (iio-sensor-proxy's
    /// `net.hadess.SensorProxy.claim-sensor` defaults).
    static let claimSensor = Motion1Interface.claimSensorAction
    /// Claiming a sensor through `net.hadess.SensorProxy`: iio-sensor-proxy 3.4+'s own action, which the
    /// distributions' polkit rules name (same defaults; declared in Support/polkit too, for systems without it).
    static let sensorProxyClaimSensor = "net.hadess.SensorProxy.claim-sensor"
    /// Raw samples or device motion faster than 25 Hz, for a caller outside the high-rate group: by default an
    /// administrator only.
    static let highRate = Motion1Interface.highRateAction

    enum Decision {
        case allowed
        case denied(String)
        /// polkit is not running (or answered nothing): what the mode makes of it is for the caller.
        case unavailable(String)
        /// Too many questions are pending: the caller's, its user's, or everyone's.
        case overLimit(String)
    }

    let connection: DBusConnection
    let use: PolkitUse
    let limits: ServiceLimits
    let log: @Sendable (String) -> Void
    private var reportedUnavailable = false
    /// Whether polkit has answered a question since the service started: afterwards, `auto` treats its absence
    /// as a restart and refuses.
    private var hasAnswered = false

    private struct Question: Hashable {
        let action: String
        let sender: String
    }
    /// Each pending question's user and the completions waiting for its answer (at most
    /// ``ServiceLimits/pendingChecks`` questions: counted by client and user where they are bounded).
    private var pending: [Question: (user: UInt32, waiting: [(Decision) -> Void])] = [:]

    init(connection: DBusConnection, use: PolkitUse, limits: ServiceLimits, log: @escaping @Sendable (String) -> Void) {
        self.connection = connection
        self.use = use
        self.limits = limits
        self.log = log
    }

    /// Asks polkit about `action` for the bus client `sender` (of uid `user`, when known); `completion` runs on
    /// the loop's thread.
    func check(_ action: String, for sender: String, user: UInt32, _ completion: @escaping (Decision) -> Void) {
        guard use != .off else {
            completion(.unavailable("polkit is not asked (--polkit off)"))
            return
        }
        let question = Question(action: action, sender: sender)
        if pending[question] != nil {
            guard pending[question]!.waiting.count < limits.callsPerPendingCheck else {
                return completion(.overLimit(
                    "\(limits.callsPerPendingCheck) calls of \(sender) already wait for polkit's answer on \(action)"))
            }
            pending[question]!.waiting.append(completion)
            return
        }
        if let refusal = overLimit(sender, user) { return completion(.overLimit(refusal)) }
        pending[question] = (user, [completion])
        let subject = DBusValue.structure([
            .string("system-bus-name"), .properties([("name", .string(sender))]),
        ])
        connection.callAsync(
            destination: "org.freedesktop.PolicyKit1", path: "/org/freedesktop/PolicyKit1/Authority",
            interface: "org.freedesktop.PolicyKit1.Authority", member: "CheckAuthorization",
            arguments: [subject, .string(action), .array(elementSignature: "{ss}", []), .uint32(0), .string("")],
            timeout: 10
        ) { [weak self] result in
            guard let self else { return }
            self.answer(question, self.decision(result, action))
        }
    }

    private func overLimit(_ sender: String, _ user: UInt32) -> String? {
        if pending.keys.filter({ $0.sender == sender }).count >= limits.pendingChecksPerClient {
            return "\(sender) has \(limits.pendingChecksPerClient) polkit checks pending (the limit per client): "
                + "wait for their answers"
        }
        if pending.values.filter({ $0.user == user }).count >= limits.pendingChecksPerUser {
            return "uid \(user) has \(limits.pendingChecksPerUser) polkit checks pending (the limit per user): "
                + "wait for their answers"
        }
        if pending.count >= limits.pendingChecks {
            return "\(limits.pendingChecks) polkit checks are pending (the service's limit): try again shortly"
        }
        return nil
    }

    private func answer(_ question: Question, _ decision: Decision) {
        guard let entry = pending.removeValue(forKey: question) else { return }
        for completion in entry.waiting { completion(decision) }
    }

    private func decision(_ result: Result<[DBusValue], MotionError>, _ action: String) -> Decision {
        switch result {
        case .success(let values):
            hasAnswered = true
            guard case .structure(let fields)? = values.first, case .boolean(let authorized)? = fields.first else {
                return .denied("polkit's answer for \(action) cannot be read: \(values)")
            }
            return authorized ? .allowed : .denied("Not Authorized: \(action)")
        case .failure(let error) where error.code == .deviceNotFound:
            if hasAnswered {
                return .denied("polkit stopped answering (it may be restarting): try again in a moment")
            }
            if !reportedUnavailable {
                reportedUnavailable = true
                log("polkit is not running: \(use == .on ? "refusing" : "allowing") what it would decide")
            }
            return .unavailable("polkit is not running")
        case .failure(let error):
            return .denied("polkit could not decide on \(action): \(error.message)")
        }
    }

    /// A claim or stream: `nil` when allowed, else the error for the caller. Without polkit: allowed in `auto`
    /// mode (unless polkit answered before), refused in `on` mode. `action` is ``claimSensor``
    /// (org.swiftmotion.Motion1) or ``sensorProxyClaimSensor`` (net.hadess.SensorProxy).
    func authorizeClaim(
        for sender: String, user: UInt32, action: String = claimSensor,
        _ completion: @escaping (DBusErrorReply?) -> Void
    ) {
        check(action, for: sender, user: user) { [use] decision in
            switch decision {
            case .allowed: completion(nil)
            case .denied(let reason):
                completion(.accessDenied(
                    "\(reason): by default only the user of the active local session may read the motion sensors "
                        + "(polkit action \(action))"))
            case .unavailable(let reason):
                completion(use == .on ? .accessDenied("\(reason), and motiond runs with --polkit on") : nil)
            case .overLimit(let reason):
                completion(.limitsExceeded(reason))
            }
        }
    }
}
