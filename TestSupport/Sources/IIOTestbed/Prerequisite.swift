public import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Something a test needs from the machine (umockdev's preload, iio-sensor-proxy, root, …), with how to get it.
///
/// Tests declare what they need with ``Testing/Trait/requires(_:sourceLocation:)``: outside CI a missing
/// prerequisite skips the test, visibly, naming what is missing; under CI (``Testbed/isRequired``) the test
/// fails with that message instead, so a broken CI machine cannot pass by skipping.
public struct Prerequisite: Sendable, CustomStringConvertible {
    /// What is needed, such as `iio-sensor-proxy`.
    public let name: String
    /// How to get it.
    public let help: String
    private let check: @Sendable () -> Bool

    /// Creates a prerequisite that holds when `isMet` returns `true`.
    public init(_ name: String, help: String, isMet: @escaping @Sendable () -> Bool) {
        self.name = name
        self.help = help
        self.check = isMet
    }

    /// Whether the machine has it now.
    public var isMet: Bool { check() }

    /// `<name> (<help>)`.
    public var description: String { "\(name) (\(help))" }

    /// What a test with these missing prerequisites does: run (none missing), be skipped (outside CI), or fail
    /// (under CI).
    public enum Outcome: Equatable, Sendable {
        case run
        case skip(String)
        case fail(String)
    }

    /// The outcome for a test whose prerequisites `missing` are not met, in CI or not.
    public static func outcome(missing: [Prerequisite], underCI: Bool) -> Outcome {
        guard !missing.isEmpty else { return .run }
        let list = missing.map(\.description).joined(separator: "; ")
        return underCI ? .fail("CI requires this test to run, but it is missing: \(list)") : .skip("missing: \(list)")
    }
}

/// The error that fails a test under CI when a prerequisite is missing.
public struct MissingPrerequisite: Error, CustomStringConvertible, Sendable {
    /// What is missing and how to get it.
    public var description: String
}

extension Prerequisite {
    /// umockdev's preload library, mapped into the test process (emulated IIO devices).
    public static let umockdevPreload = Prerequisite(
        "umockdev's preload library in the test process", help: Testbed.preloadHelp
    ) { Testbed.preloadActive }

    /// iio-sensor-proxy, monitor-sensor and dbus-daemon, and root to run the daemon (``IioSensorProxySession``).
    public static let iioSensorProxy = Prerequisite(
        "iio-sensor-proxy, monitor-sensor and dbus-daemon, run as root",
        help: "install iio-sensor-proxy and dbus (.ci/run does) and run the tests as root"
    ) { IioSensorProxySession.isAvailable }

    /// dbus-daemon and the D-Bus clients the service's tests use: monitor-sensor, busctl and gdbus.
    public static let dbusClients = Prerequisite(
        "dbus-daemon, monitor-sensor, busctl and gdbus",
        help: "install dbus-daemon, iio-sensor-proxy, systemd and libglib2.0-bin (.ci/run does)"
    ) {
        let tools: [String] = ["/usr/bin/dbus-daemon", "/usr/bin/monitor-sensor", "/usr/bin/busctl", "/usr/bin/gdbus"]
        return tools.allSatisfy {
            access($0, X_OK) == 0
        }
    }

    /// python-dbusmock (its polkitd template stands in for polkit on a private bus).
    public static let dbusmock = Prerequisite(
        "python3-dbusmock", help: "install python3-dbusmock (.ci/run does)"
    ) { access("/usr/lib/python3/dist-packages/dbusmock/templates/polkitd.py", R_OK) == 0 }

    /// The process runs as root.
    public static let root = Prerequisite("root", help: "run the tests as root (CI does)") { getuid() == 0 }

    /// The mosquitto broker and its clients (`mosquitto_sub`), for the MQTT publisher's tests.
    public static let mosquitto = Prerequisite(
        "mosquitto and mosquitto_sub", help: "install mosquitto and mosquitto-clients (.ci/run does)"
    ) { access("/usr/sbin/mosquitto", X_OK) == 0 && access("/usr/bin/mosquitto_sub", X_OK) == 0 }

    /// `/usr/bin/setpriv` (util-linux), to run a child as another user.
    public static let setpriv = Prerequisite("/usr/bin/setpriv", help: "install util-linux") {
        access("/usr/bin/setpriv", X_OK) == 0
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test or suite only when every prerequisite is met. Otherwise it is skipped, with a comment naming
    /// what is missing, or under CI (`CI` set and not `false`/`0`, ``Testbed/isRequired``) it fails with that
    /// message instead of being skipped.
    public static func requires(
        _ prerequisites: Prerequisite..., sourceLocation: SourceLocation = #_sourceLocation
    ) -> Self {
        // The comment is fixed when the trait is made: it names what is missing at that moment.
        let missing = prerequisites.filter { !$0.isMet }
        let comment: Comment =
            missing.isEmpty
            ? "requires \(prerequisites.map(\.name).joined(separator: ", "))"
            : "missing: \(missing.map(\.description).joined(separator: "; "))"
        return .enabled(comment, sourceLocation: sourceLocation) {
            switch Prerequisite.outcome(missing: prerequisites.filter { !$0.isMet }, underCI: Testbed.isRequired) {
            case .run: true
            case .skip: false
            case .fail(let message): throw MissingPrerequisite(description: message)
            }
        }
    }
}
