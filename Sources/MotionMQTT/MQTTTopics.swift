#if canImport(Glibc)
import Glibc
#endif

/// Topic names: `PREFIX/HOST/INPUT/samples` for the samples, `PREFIX/HOST/status` for the retained status.
package enum MQTTTopics {
    /// A topic level from any text (a device selector, a host name): letters, digits, `-`, `_` and `.` kept, the
    /// rest as `_`.
    package static func level(_ name: String) -> String {
        String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) ? $0 : "_" })
    }

    /// The host name as a topic level.
    package static func hostName() -> String {
        var buffer = [UInt8](repeating: 0, count: 256)
        let status = buffer.withUnsafeMutableBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { gethostname($0.baseAddress!, 255) }
        }
        guard status == 0 else { return "localhost" }
        return level(String(decoding: buffer.prefix(while: { $0 != 0 }), as: UTF8.self))
    }

    /// The samples' topic.
    package static func samples(prefix: String, host: String, input: String) -> String { "\(prefix)/\(host)/\(input)/samples" }

    /// The retained status topic (`online`, `offline`).
    package static func status(prefix: String, host: String) -> String { "\(prefix)/\(host)/status" }
}
