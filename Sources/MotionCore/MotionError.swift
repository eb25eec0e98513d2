/// The one error type swift-motion throws: what went wrong (``code``), how to fix it (``message``), where
/// (``location``) and the underlying cause.
public struct MotionError: Error, Sendable, CustomStringConvertible {
    /// A category of failure. New codes may be added; switch with a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Kind: String, Hashable, Sendable {
            case invalidArgument
            case malformedTrace
            case truncatedTrace
            case noInput
            case ioFailure
            case permissionDenied
            case deviceNotFound
            case disconnected
            case unsupported
            case cancelled
            case outputExists
            case malformedState
        }

        let kind: Kind

        /// A parameter or option value is out of range or malformed.
        public static let invalidArgument = Code(kind: .invalidArgument)
        /// A trace is not in the canonical format (bad header, column count, value or timestamp order).
        public static let malformedTrace = Code(kind: .malformedTrace)
        /// A trace ends in the middle of a line, as when a recorder was killed.
        public static let truncatedTrace = Code(kind: .truncatedTrace)
        /// An input file or device does not exist or is empty.
        public static let noInput = Code(kind: .noInput)
        /// Reading or writing failed at the operating-system level.
        public static let ioFailure = Code(kind: .ioFailure)
        /// The process may not open a file or device.
        public static let permissionDenied = Code(kind: .permissionDenied)
        /// No device matches the request.
        public static let deviceNotFound = Code(kind: .deviceNotFound)
        /// A device went away while in use.
        public static let disconnected = Code(kind: .disconnected)
        /// The device, trace or platform cannot do what was asked.
        public static let unsupported = Code(kind: .unsupported)
        /// The operation was cancelled.
        public static let cancelled = Code(kind: .cancelled)
        /// An output file already exists and replacing it was not asked for.
        public static let outputExists = Code(kind: .outputExists)
        /// A saved state (such as a calibration file) cannot be read back: damaged, or of another version.
        public static let malformedState = Code(kind: .malformedState)

        /// The code's name, such as `malformedTrace`.
        public var description: String { kind.rawValue }
    }

    /// Where the problem is: a file with an optional line and column, or a device attribute.
    public struct Location: Hashable, Sendable, CustomStringConvertible {
        /// The file path (`-` or `<stdin>` for standard input), or `nil`.
        public var file: String?
        /// The 1-based line number in `file`, or `nil`.
        public var line: Int?
        /// The column's name (such as `ax`) or 1-based number, or `nil`.
        public var column: String?
        /// A sysfs attribute or device property, such as `in_accel_scale`, or `nil`.
        public var attribute: String?

        /// Creates a location.
        public init(file: String? = nil, line: Int? = nil, column: String? = nil, attribute: String? = nil) {
            self.file = file
            self.line = line
            self.column = column
            self.attribute = attribute
        }

        /// `file:line: column 'ax'` style text, with the parts that are known.
        public var description: String {
            var text = file ?? ""
            if let line { text += text.isEmpty ? "line \(line)" : ":\(line)" }
            if let column { text += (text.isEmpty ? "" : ": ") + "column '\(column)'" }
            if let attribute { text += (text.isEmpty ? "" : ": ") + "attribute '\(attribute)'" }
            return text
        }
    }

    /// What went wrong.
    public var code: Code
    /// A sentence that says what is wrong and how to fix it.
    public var message: String
    /// Where the problem is, or `nil` when it has no place.
    public var location: Location?
    /// The error that caused this one (such as a system error), or `nil`.
    public var underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, at location: Location? = nil, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.location = location
        self.underlying = underlying
    }

    /// `location: message (cause)` on one line.
    public var description: String {
        var text = ""
        if let location, !location.description.isEmpty { text = "\(location): " }
        text += message
        if let underlying { text += " (\(underlying))" }
        return text
    }
}

/// A system error number (`errno`) with its name, carried as the underlying cause of a ``MotionError``.
public struct SystemErrno: Error, Hashable, Sendable, CustomStringConvertible {
    /// The `errno` value.
    public var rawValue: Int32
    /// The C library's text for it, such as `No such file or directory`.
    public var text: String

    /// Creates a system error from a value and its text.
    public init(rawValue: Int32, text: String) {
        self.rawValue = rawValue
        self.text = text
    }

    /// `text (errno N)`.
    public var description: String { "\(text) (errno \(rawValue))" }
}
