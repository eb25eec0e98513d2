internal import CSystemd
import MotionCore
import MotionSystem

#if canImport(Glibc)
import Glibc
#endif

/// The D-Bus type code of a basic or container type, as sd-bus takes it (`'s'`, `'a'`, …).
func typeCode(_ character: Unicode.Scalar) -> CChar { CChar(UInt8(ascii: character)) }

/// Appends and reads ``DBusValue``s on an `sd_bus_message` (`sd_bus_message_append_basic`,
/// `sd_bus_message_open_container`, `sd_bus_message_read_basic`, …; the variadic forms do not import).
enum Message {
    /// Appends `values` in order; a negative errno from sd-bus on failure.
    static func append(_ values: [DBusValue], to message: OpaquePointer?) -> Int32 {
        for value in values {
            let result = append(value, to: message)
            if result < 0 { return result }
        }
        return 0
    }

    /// Appends one value.
    static func append(_ value: DBusValue, to message: OpaquePointer?) -> Int32 {
        switch value {
        case .boolean(let flag):
            var raw: Int32 = flag ? 1 : 0
            return sd_bus_message_append_basic(message, typeCode("b"), &raw)
        case .byte(var raw): return sd_bus_message_append_basic(message, typeCode("y"), &raw)
        case .int32(var raw): return sd_bus_message_append_basic(message, typeCode("i"), &raw)
        case .uint32(var raw): return sd_bus_message_append_basic(message, typeCode("u"), &raw)
        case .int64(var raw): return sd_bus_message_append_basic(message, typeCode("x"), &raw)
        case .uint64(var raw): return sd_bus_message_append_basic(message, typeCode("t"), &raw)
        case .double(var raw): return sd_bus_message_append_basic(message, typeCode("d"), &raw)
        case .fileDescriptor(var raw): return sd_bus_message_append_basic(message, typeCode("h"), &raw)
        case .string(let text): return text.withCString { sd_bus_message_append_basic(message, typeCode("s"), $0) }
        case .objectPath(let text):
            return text.withCString { sd_bus_message_append_basic(message, typeCode("o"), $0) }
        case .variant(let inner):
            return container(typeCode("v"), inner.signature, [inner], message)
        case .array(let element, let values):
            return container(typeCode("a"), element, values, message)
        case .dictionaryEntry(let key, let entryValue):
            return container(typeCode("e"), key.signature + entryValue.signature, [key, entryValue], message)
        case .structure(let fields):
            return container(typeCode("r"), fields.map(\.signature).joined(), fields, message)
        }
    }

    private static func container(
        _ type: CChar, _ contents: String, _ values: [DBusValue], _ message: OpaquePointer?
    ) -> Int32 {
        var result = sd_bus_message_open_container(message, type, contents)
        if result < 0 { return result }
        result = append(values, to: message)
        if result < 0 { return result }
        return sd_bus_message_close_container(message)
    }

    /// How much of a message another process sent is read: every value (basic or container) counts against
    /// ``values``, and no string may be longer than ``stringBytes``. Reading stops with `E2BIG` at the first value
    /// over either limit, before the rest is looked at, so a huge message costs no more than the limit.
    struct Limits {
        /// Values left to read.
        var values: Int
        /// The longest string, object path or signature accepted, in bytes.
        let stringBytes: Int

        /// No limit: replies to the calls this process makes.
        static let none = Limits(values: .max, stringBytes: .max)
        /// The arguments of a method call to a served object: 256 values, strings of 4 KiB
        /// (`Docs/Service.md`, "Limits").
        static let methodCall = Limits(values: 256, stringBytes: 4096)
    }

    /// Reads every remaining value at the current level; throws the sd-bus errno on a malformed message, and
    /// `E2BIG` past `limits`.
    static func readAll(_ message: OpaquePointer?, limits: inout Limits) throws(SystemErrno) -> [DBusValue] {
        var values: [DBusValue] = []
        while let value = try read(message, limits: &limits) { values.append(value) }
        return values
    }

    /// Reads every remaining value at the current level, without limits (a reply to this process's call).
    static func readAll(_ message: OpaquePointer?) throws(SystemErrno) -> [DBusValue] {
        var limits = Limits.none
        return try readAll(message, limits: &limits)
    }

    /// Reads the next value at the current level, or `nil` at its end.
    static func read(_ message: OpaquePointer?, limits: inout Limits) throws(SystemErrno) -> DBusValue? {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>? = nil
        let peeked = sd_bus_message_peek_type(message, &type, &contents)
        if peeked < 0 { throw SystemErrno(-peeked) }
        if peeked == 0 { return nil }
        guard limits.values > 0 else { throw SystemErrno(E2BIG) }
        limits.values -= 1
        switch UInt8(bitPattern: type) {
        case UInt8(ascii: "a"), UInt8(ascii: "v"), UInt8(ascii: "e"), UInt8(ascii: "r"):
            let inner = contents.map { String(cString: $0) } ?? ""
            try check(sd_bus_message_enter_container(message, type, contents))
            let values = try readAll(message, limits: &limits)
            try check(sd_bus_message_exit_container(message))
            switch UInt8(bitPattern: type) {
            case UInt8(ascii: "a"): return .array(elementSignature: inner, values)
            case UInt8(ascii: "v"): return .variant(values.first ?? .structure([]))
            case UInt8(ascii: "e"):
                guard values.count == 2 else { throw SystemErrno(EBADMSG) }
                return .dictionaryEntry(values[0], values[1])
            default: return .structure(values)
            }
        case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"):
            var text: UnsafePointer<CChar>? = nil
            try check(sd_bus_message_read_basic(message, type, &text))
            guard let text, strnlen(text, limits.stringBytes &+ 1) <= limits.stringBytes else {
                throw SystemErrno(text == nil ? EBADMSG : E2BIG)
            }
            let string = String(cString: text)
            return type == typeCode("o") ? .objectPath(string) : .string(string)
        case UInt8(ascii: "b"):
            var raw: Int32 = 0
            try check(sd_bus_message_read_basic(message, type, &raw))
            return .boolean(raw != 0)
        case UInt8(ascii: "y"): return .byte(try basic(message, type, UInt8(0)))
        case UInt8(ascii: "n"): return .int32(Int32(try basic(message, type, Int16(0))))
        case UInt8(ascii: "q"): return .uint32(UInt32(try basic(message, type, UInt16(0))))
        case UInt8(ascii: "i"): return .int32(try basic(message, type, Int32(0)))
        case UInt8(ascii: "u"): return .uint32(try basic(message, type, UInt32(0)))
        case UInt8(ascii: "x"): return .int64(try basic(message, type, Int64(0)))
        case UInt8(ascii: "t"): return .uint64(try basic(message, type, UInt64(0)))
        case UInt8(ascii: "d"): return .double(try basic(message, type, Double(0)))
        case UInt8(ascii: "h"): return .fileDescriptor(try basic(message, type, Int32(-1)))
        default: throw SystemErrno(EBADMSG)
        }
    }

    private static func basic<T: BitwiseCopyable>(_ message: OpaquePointer?, _ type: CChar, _ initial: T) throws(SystemErrno) -> T {
        var value = initial
        try check(sd_bus_message_read_basic(message, type, &value))
        return value
    }

    /// Throws the errno of a negative sd-bus result.
    static func check(_ result: Int32) throws(SystemErrno) {
        if result < 0 { throw SystemErrno(-result) }
    }
}
