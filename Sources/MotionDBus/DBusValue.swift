/// One D-Bus value with its type: what method calls carry, replies return, properties hold and signals send.
///
/// The D-Bus type of each case is its ``signature``: `b`, `y`, `i`, `u`, `x`, `t`, `d`, `s`, `o`, `h`, `v`,
/// `a…`, `{…}` and `(…)`.
package enum DBusValue: Sendable, Hashable, CustomStringConvertible {
    /// `b`.
    case boolean(Bool)
    /// `y`.
    case byte(UInt8)
    /// `i`.
    case int32(Int32)
    /// `u`.
    case uint32(UInt32)
    /// `x`.
    case int64(Int64)
    /// `t`.
    case uint64(UInt64)
    /// `d`.
    case double(Double)
    /// `s`.
    case string(String)
    /// `o`.
    case objectPath(String)
    /// `h`: a file descriptor. Sent: the bus library duplicates it, so the sender still owns (and closes) its
    /// own. Received: valid only while the call is being handled.
    case fileDescriptor(Int32)
    /// `v`: a value with its type.
    indirect case variant(DBusValue)
    /// `a…`: elements of one type, `elementSignature`; a dictionary is an array of ``dictionaryEntry(_:_:)``.
    case array(elementSignature: String, [DBusValue])
    /// `{kv}`: an entry of a dictionary (only inside an array).
    indirect case dictionaryEntry(DBusValue, DBusValue)
    /// `(…)`.
    case structure([DBusValue])

    /// The value's D-Bus type signature.
    package var signature: String {
        switch self {
        case .boolean: "b"
        case .byte: "y"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .fileDescriptor: "h"
        case .variant: "v"
        case .array(let element, _): "a" + element
        case .dictionaryEntry(let key, let value): "{" + key.signature + value.signature + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        }
    }

    /// A string-keyed dictionary of variants (`a{sv}`), as `GetAll` and `PropertiesChanged` carry.
    package static func properties(_ entries: [(String, DBusValue)]) -> DBusValue {
        .array(elementSignature: "{sv}", entries.map { .dictionaryEntry(.string($0.0), .variant($0.1)) })
    }

    /// An array of strings (`as`).
    package static func strings(_ values: [String]) -> DBusValue {
        .array(elementSignature: "s", values.map(DBusValue.string))
    }

    /// The string of `.string` and `.objectPath`, else `nil`.
    package var stringValue: String? {
        switch self {
        case .string(let value), .objectPath(let value): value
        default: nil
        }
    }

    /// The number of the numeric cases, as `Double`, else `nil`.
    package var doubleValue: Double? {
        switch self {
        case .double(let value): value
        case .byte(let value): Double(value)
        case .int32(let value): Double(value)
        case .uint32(let value): Double(value)
        case .int64(let value): Double(value)
        case .uint64(let value): Double(value)
        default: nil
        }
    }

    /// The entries of an `a{sv}` (or any string-keyed dictionary), variants unwrapped; `nil` for other values.
    package var propertyEntries: [(String, DBusValue)]? {
        guard case .array(let element, let values) = self, element.hasPrefix("{s") else { return nil }
        return values.compactMap { entry in
            guard case .dictionaryEntry(.string(let key), let value) = entry else { return nil }
            if case .variant(let inner) = value { return (key, inner) }
            return (key, value)
        }
    }

    /// The value as `busctl` prints it, for logs and errors.
    package var description: String {
        switch self {
        case .boolean(let value): "\(value)"
        case .byte(let value): "\(value)"
        case .int32(let value): "\(value)"
        case .uint32(let value): "\(value)"
        case .int64(let value): "\(value)"
        case .uint64(let value): "\(value)"
        case .double(let value): "\(value)"
        case .string(let value), .objectPath(let value): "\"\(value)\""
        case .fileDescriptor(let value): "fd \(value)"
        case .variant(let value): "<\(value)>"
        case .array(_, let values): "[" + values.map(\.description).joined(separator: ", ") + "]"
        case .dictionaryEntry(let key, let value): "\(key): \(value)"
        case .structure(let fields): "(" + fields.map(\.description).joined(separator: ", ") + ")"
        }
    }
}
