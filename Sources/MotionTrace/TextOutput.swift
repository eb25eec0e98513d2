package import MotionCore

/// The one JSON string escaper of swift-motion (trace writer, event output, `motionctl devices --json`).
package enum JSONString {
    /// Appends `string` as a JSON string: `"` and `\` escaped, control characters as `\n`, `\t`, `\r`, `\b`,
    /// `\f` or `\u00XX`; other characters as UTF-8.
    package static func append(_ string: String, to text: inout [UInt8]) {
        text.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): text += "\\\"".utf8
            case UInt8(ascii: "\\"): text += "\\\\".utf8
            case UInt8(ascii: "\n"): text += "\\n".utf8
            case UInt8(ascii: "\r"): text += "\\r".utf8
            case UInt8(ascii: "\t"): text += "\\t".utf8
            case 0x08: text += "\\b".utf8
            case 0x0C: text += "\\f".utf8
            case 0..<0x20:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                text += "\\u00".utf8
                text.append(hex[Int(byte >> 4)])
                text.append(hex[Int(byte & 15)])
            default: text.append(byte)
            }
        }
        text.append(UInt8(ascii: "\""))
    }

    /// `string` as a quoted JSON string.
    package static func quoted(_ string: String) -> String {
        var text: [UInt8] = []
        append(string, to: &text)
        return String(decoding: text, as: UTF8.self)
    }
}

/// Whole writes of text to a descriptor (stdout, stderr), through the package's one `EINTR`-retrying write.
package enum TextOutput {
    /// Writes all of `text` to `fileDescriptor`, continuing after partial writes.
    ///
    /// - Throws: `MotionError` (`ioFailure`, or `permissionDenied`) naming `name`, such as `<stdout>`.
    package static func write(_ text: String, to fileDescriptor: Int32, name: String) throws(MotionError) {
        var text = text
        let result = text.withUTF8 { bytes in
            SystemCall.writeAll(fileDescriptor, bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!, count: bytes.count)
        }
        if case .failure(let error) = result { throw MotionError.system(error, "write to", name) }
    }

    /// Writes all of `bytes` to `fileDescriptor`, continuing after partial writes.
    ///
    /// - Throws: `MotionError` (`ioFailure`, or `permissionDenied`) naming `name`, such as `<stdout>`.
    package static func write(_ bytes: UnsafeRawBufferPointer, to fileDescriptor: Int32, name: String) throws(MotionError) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        let result = SystemCall.writeAll(fileDescriptor, base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        if case .failure(let error) = result { throw MotionError.system(error, "write to", name) }
    }
}

/// Numbers as JSON text, with the trace writer's digits.
package enum JSONNumber {
    /// The shortest decimal text that reads back as `value` (valid JSON: `0.0035`, `100`, `1e-7`), or `null` when
    /// `value` is not finite (JSON has no NaN or infinity).
    package static func text(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: DecimalFormatter.requiredCapacity) { scratch in
            let length = DecimalFormatter.write(value, to: scratch.baseAddress!)
            return String(decoding: UnsafeBufferPointer(start: scratch.baseAddress!, count: length), as: UTF8.self)
        }
    }
}
