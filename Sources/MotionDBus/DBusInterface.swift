/// An interface an object serves: its methods, properties and signals, with their D-Bus signatures and
/// argument names (shown by `busctl introspect`).
package struct DBusInterface: Sendable {
    /// A method: `inputs` and `outputs` are (name, signature) pairs.
    package struct Method: Sendable {
        package var name: String
        package var inputs: [(name: String, signature: String)]
        package var outputs: [(name: String, signature: String)]

        package init(
            _ name: String, inputs: [(name: String, signature: String)] = [],
            outputs: [(name: String, signature: String)] = []
        ) {
            self.name = name
            self.inputs = inputs
            self.outputs = outputs
        }
    }

    /// A read-only property. `emitsChange`: its changes are announced with `PropertiesChanged`.
    package struct Property: Sendable {
        package var name: String
        package var signature: String
        package var emitsChange: Bool

        package init(_ name: String, _ signature: String, emitsChange: Bool = true) {
            self.name = name
            self.signature = signature
            self.emitsChange = emitsChange
        }
    }

    /// A signal with its arguments.
    package struct Signal: Sendable {
        package var name: String
        package var arguments: [(name: String, signature: String)]

        package init(_ name: String, arguments: [(name: String, signature: String)] = []) {
            self.name = name
            self.arguments = arguments
        }
    }

    /// The interface name, such as `net.hadess.SensorProxy`.
    package var name: String
    package var methods: [Method]
    package var properties: [Property]
    package var signals: [Signal]

    package init(_ name: String, methods: [Method] = [], properties: [Property] = [], signals: [Signal] = []) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }
}

/// A D-Bus error reply: a name such as `org.freedesktop.DBus.Error.InvalidArgs` and a message that says what
/// was wrong and how to fix it. Handlers throw it to refuse a call.
package struct DBusErrorReply: Error, Sendable, Hashable, CustomStringConvertible {
    package var name: String
    package var message: String

    package init(_ name: String, _ message: String) {
        self.name = name
        self.message = message
    }

    /// `org.freedesktop.DBus.Error.InvalidArgs`: an argument is out of range or of the wrong type.
    package static func invalidArguments(_ message: String) -> DBusErrorReply {
        DBusErrorReply("org.freedesktop.DBus.Error.InvalidArgs", message)
    }

    /// `org.freedesktop.DBus.Error.AccessDenied`: the caller lacks a right; the message names it.
    package static func accessDenied(_ message: String) -> DBusErrorReply {
        DBusErrorReply("org.freedesktop.DBus.Error.AccessDenied", message)
    }

    /// `org.freedesktop.DBus.Error.LimitsExceeded`: the caller is over one of the service's limits; the message
    /// names it.
    package static func limitsExceeded(_ message: String) -> DBusErrorReply {
        DBusErrorReply("org.freedesktop.DBus.Error.LimitsExceeded", message)
    }

    /// `org.freedesktop.DBus.Error.Failed`: the service could not do it.
    package static func failed(_ message: String) -> DBusErrorReply {
        DBusErrorReply("org.freedesktop.DBus.Error.Failed", message)
    }

    package var description: String { "\(name): \(message)" }
}
