/// The comment lines at the top of a trace, in order: `# key: value` entries and free-text comments.
///
/// A trace starts with optional lines beginning with `#`. A line of the form `# key: value`, where the key is
/// made of ASCII letters, digits, `_` and `-`, is an ``Line/entry(key:value:)``; any other `#` line (such as the
/// attribution of a dataset) is a ``Line/comment(_:)``. Readers keep every line, in order, so that copying a
/// trace keeps its attribution. Typical keys: `source`, `rate_hz`, `device`, `mount_matrix`, `notes`, `clock`.
public struct TraceMetadata: Hashable, Sendable {
    /// One comment line of a trace, without its leading `#`.
    public enum Line: Hashable, Sendable {
        /// A `# key: value` line. Keys compare case-insensitively.
        case entry(key: String, value: String)
        /// Any other `#` line: the text after `#` and one following space.
        case comment(String)
    }

    /// The lines, in file order.
    public var lines: [Line]

    /// Creates metadata from lines, in the order they will be written.
    public init(lines: [Line] = []) {
        self.lines = lines
    }

    /// The value of the first entry whose key matches `key` (ASCII case-insensitive), or `nil`.
    ///
    /// Setting a value replaces the first matching entry's value (keeping its key's spelling) and removes later
    /// entries with the same key, or appends a new entry when there is none. Setting `nil` removes every
    /// matching entry.
    public subscript(key: String) -> String? {
        get {
            for case .entry(let k, let value) in lines where Self.keysMatch(k, key) { return value }
            return nil
        }
        set {
            let matching = lines.indices.filter {
                if case .entry(let k, _) = lines[$0] { return Self.keysMatch(k, key) }
                return false
            }
            guard let newValue else {
                for index in matching.reversed() { lines.remove(at: index) }
                return
            }
            guard let first = matching.first, case .entry(let existingKey, _) = lines[first] else {
                lines.append(.entry(key: key, value: newValue))
                return
            }
            lines[first] = .entry(key: existingKey, value: newValue)
            for index in matching.dropFirst().reversed() { lines.remove(at: index) }
        }
    }

    /// The entries, in order, as key-value pairs.
    public var entries: [(key: String, value: String)] {
        lines.compactMap {
            if case .entry(let key, let value) = $0 { return (key, value) }
            return nil
        }
    }

    /// The free-text comment lines, in order.
    public var comments: [String] {
        lines.compactMap {
            if case .comment(let text) = $0 { return text }
            return nil
        }
    }

    static func keysMatch(_ a: String, _ b: String) -> Bool {
        a.utf8.elementsEqual(b.utf8) { asciiLowercase($0) == asciiLowercase($1) }
    }

    private static func asciiLowercase(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }

    /// `true` for the bytes a key may contain: ASCII letters, digits, `_` and `-`.
    static func isKeyByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }

    /// Classifies the text of a comment line (the bytes after `#`, line terminator removed).
    ///
    /// One space after `#` is dropped. The rest is an entry when it is `key:` followed by a space or the end
    /// of the line; the value is what follows `": "`.
    static func parseLine(_ text: UnsafeBufferPointer<UInt8>) -> Line {
        var start = 0
        if start < text.count, text[start] == UInt8(ascii: " ") { start += 1 }
        var index = start
        while index < text.count, isKeyByte(text[index]) { index += 1 }
        if index > start, index < text.count, text[index] == UInt8(ascii: ":"),
            index + 1 == text.count || text[index + 1] == UInt8(ascii: " ")
        {
            let key = String(decoding: UnsafeBufferPointer(rebasing: text[start..<index]), as: UTF8.self)
            let valueStart = min(index + 2, text.count)
            let value = String(decoding: UnsafeBufferPointer(rebasing: text[valueStart...]), as: UTF8.self)
            return .entry(key: key, value: value)
        }
        return .comment(String(decoding: UnsafeBufferPointer(rebasing: text[start...]), as: UTF8.self))
    }
}
