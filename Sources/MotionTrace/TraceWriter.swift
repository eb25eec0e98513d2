public import MotionCore

/// The output formats of a ``TraceWriter``.
public enum TraceFormat: String, Sendable, CaseIterable {
    /// The canonical trace CSV that ``TraceReader`` reads: `# key: value` metadata lines, a header row and one
    /// row per sample, with empty fields for a sensor that did not sample.
    case csv
    /// JSON Lines: one JSON object per line. Samples are
    /// `{"type":"sample","t":0.0035,"ax":…,"ay":…,"az":…,"gx":…,"gy":…,"gz":…,"mx":…,"my":…,"mz":…}`
    /// (t in s, a in g, g in rad/s, m in µT), with a sensor's three keys left out when it did not sample.
    /// Non-empty metadata comes first as `{"type":"metadata","lines":[{"key":"…","value":"…"},{"comment":"…"}]}`.
    /// Events are `{"type":"<type>","t":…,<fields>}`.
    case jsonl
}

/// A value in an event written by ``TraceWriter/writeEvent(type:timestamp:fields:)``.
public enum EventValue: Hashable, Sendable, ExpressibleByFloatLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByStringLiteral, ExpressibleByBooleanLiteral
{
    /// A number, written as a JSON number (`null` when not finite).
    case number(Double)
    /// A string, written as a JSON string.
    case string(String)
    /// A Boolean, written as `true` or `false`.
    case bool(Bool)

    /// A number.
    public init(floatLiteral value: Double) { self = .number(value) }
    /// A number.
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// A Boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

/// Writes samples as a canonical CSV trace or as JSON Lines, to a file descriptor or into memory.
///
/// Output is formatted into a reused 256 KiB buffer and written with `write(2)` (retrying `EINTR` and
/// continuing after partial writes), either after each line (``Flushing/eachLine``) or when the buffer is full
/// (``Flushing/whenFull``). With ``Flushing/whenFull``, a pipe's kernel buffer is grown to 1 MiB
/// (`F_SETPIPE_SZ`, Linux; never shrunk, failures ignored), which halves the cost of streaming into a pipe. The metadata and header are written lazily, before the first row or event, or by
/// ``flush()``.
///
/// Numbers are written as the shortest decimal text that reads back as the same `Double` (see
/// `DecimalFormatter`), so a CSV trace written and read again gives bit-identical values, and the JSON is
/// valid (no `nan` or `inf`).
///
/// ## Errors
///
/// - A sample with a non-finite timestamp or reading, or a timestamp earlier than the previous sample's,
///   throws `MotionError.Code.invalidArgument` and writes nothing: the trace format holds finite numbers in
///   time order only.
/// - A failed `write(2)` throws `MotionError.Code.ioFailure` (`MotionError.Code.permissionDenied` for
///   `EACCES`) with the `SystemErrno` as the underlying error; every later call throws the same error. When
///   the reader of a pipe has gone (as with `| head`), that is `EPIPE`, which a command-line tool can treat as
///   a quiet end. The process must ignore `SIGPIPE` to see it (`signal(SIGPIPE, SIG_IGN)`); the writer does not
///   change signal handling.
///
/// A writer is a single-producer object: it is not `Sendable`. Call ``flush()`` before closing the
/// descriptor; `deinit` writes what is still buffered too, but cannot report errors (and writes no header for a
/// writer that never wrote anything).
public final class TraceWriter {
    /// When buffered output is written to the file descriptor.
    public enum Flushing: Sendable {
        /// After every line (line-buffered): for live output that a reader follows.
        case eachLine
        /// When the 256 KiB buffer is full, and on ``TraceWriter/flush()`` (block-buffered): fastest.
        case whenFull
    }

    private enum Sink {
        case descriptor(Int32)
        case memory
    }

    /// The output format.
    public let format: TraceFormat
    /// The sensor groups written; readings of other sensors are ignored.
    public let sensors: SensorSet
    /// The metadata written before the header (CSV) or as the first object (JSON Lines).
    public let metadata: TraceMetadata
    /// The name used in errors: the name given to the initialiser, or `<memory>`.
    public let name: String

    private let sink: Sink
    private let flushing: Flushing
    /// Record mode: the columns after `t` and the JSON type, for ``write(recordAt:values:)``; `nil` for samples.
    private let record: (type: String, columns: [String], csvHeader: [UInt8], jsonKeys: [[UInt8]], reserve: Int)?
    private var memory: [UInt8] = []
    private let buffer: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    private let powers = PowersOfTen.shared
    private var count = 0
    private var wrotePreamble = false
    private var previousTimestamp = -Double.infinity
    private var failure: MotionError?

    /// Room kept free for one sample line: 10 numbers of at most ``DecimalFormatter/requiredCapacity`` bytes
    /// and their keys.
    private static let rowReserve = 10 * (DecimalFormatter.requiredCapacity + 8) + 64

    /// Creates a writer to an open file descriptor, which it does not close.
    ///
    /// - Parameters:
    ///   - fileDescriptor: A descriptor open for writing (a file, a pipe, standard output).
    ///   - name: The name to use in errors, such as `<stdout>` or a path.
    ///   - format: CSV or JSON Lines.
    ///   - sensors: The sensor groups to write (the CSV header's columns).
    ///   - metadata: Lines written before the header (CSV) or as the first object (JSON Lines, when not
    ///     empty).
    ///   - flushing: Write after each line, or when the buffer is full (the default).
    /// - Throws: `MotionError.Code.invalidArgument` when `fileDescriptor` is not open.
    public init(
        fileDescriptor: Int32, name: String, format: TraceFormat, sensors: SensorSet,
        metadata: TraceMetadata = .init(), flushing: Flushing = .whenFull
    ) throws(MotionError) {
        guard SystemCall.isOpen(fileDescriptor) else {
            throw MotionError(
                .invalidArgument, "file descriptor \(fileDescriptor) for \(name) is not open",
                at: MotionError.Location(file: name))
        }
        self.sink = .descriptor(fileDescriptor)
        self.name = name
        self.format = format
        self.sensors = sensors
        self.metadata = metadata
        self.flushing = flushing
        self.capacity = 256 * 1024
        self.buffer = .allocate(capacity: capacity)
        self.record = nil
        if flushing == .whenFull { SystemCall.growPipeBuffer(fileDescriptor, to: 1 << 20) }
    }

    /// Creates a writer of records with columns of its own, such as attitude rows `t,qw,qx,qy,qz`, to an open file
    /// descriptor, which it does not close. Write them with ``write(recordAt:values:)``.
    ///
    /// - Parameters:
    ///   - fileDescriptor: A descriptor open for writing.
    ///   - name: The name to use in errors.
    ///   - format: CSV (header `t,<columns>`, one row per record) or JSON Lines
    ///     (`{"type":"<recordType>","t":…,"<column>":…}`).
    ///   - recordType: The JSON `type` of each record, such as `attitude`; letters, digits and `_` only.
    ///   - columns: The names of the values after `t`; JSON keys too, so letters, digits and `_` only.
    ///   - metadata: Lines written before the header (CSV) or as the first object (JSON Lines, when not empty).
    ///   - flushing: Write after each line, or when the buffer is full (the default).
    /// - Throws: `MotionError.Code.invalidArgument` when `fileDescriptor` is not open or the record type or a
    ///   column name is not letters, digits and `_`.
    public init(
        fileDescriptor: Int32, name: String, format: TraceFormat, recordType: String, columns: [String],
        metadata: TraceMetadata = .init(), flushing: Flushing = .whenFull
    ) throws(MotionError) {
        guard SystemCall.isOpen(fileDescriptor) else {
            throw MotionError(
                .invalidArgument, "file descriptor \(fileDescriptor) for \(name) is not open",
                at: MotionError.Location(file: name))
        }
        let valid = { (c: Character) in c.isASCII && (c.isLetter || c.isNumber || c == "_") }
        if let bad = ([recordType] + columns).first(where: { $0.isEmpty || !$0.allSatisfy(valid) }) {
            throw MotionError(.invalidArgument, "record type or column name '\(bad)' must be letters, digits and '_'")
        }
        // One record must fit in the buffer with room to spare (see `recordReserve`).
        let reserve = TraceWriter.recordReserve(type: recordType, columns: columns)
        guard reserve <= 64 * 1024 else {
            throw MotionError(
                .invalidArgument, "\(columns.count) columns are too many or too long for one record line",
                at: MotionError.Location(file: name))
        }
        self.sink = .descriptor(fileDescriptor)
        self.name = name
        self.format = format
        self.sensors = []
        self.metadata = metadata
        self.flushing = flushing
        self.capacity = 256 * 1024
        self.buffer = .allocate(capacity: capacity)
        self.record = (
            recordType, columns, Array((["t"] + columns).joined(separator: ",").utf8) + [UInt8(ascii: "\n")],
            columns.map { Array(",\"\($0)\":".utf8) }, reserve
        )
        if flushing == .whenFull { SystemCall.growPipeBuffer(fileDescriptor, to: 1 << 20) }
    }

    /// Creates a writer of records with columns of its own (as
    /// ``init(fileDescriptor:name:format:recordType:columns:metadata:flushing:)``) that collects its output in
    /// memory, in ``writtenBytes`` and ``takeWrittenBytes()``.
    /// - Throws: `MotionError.Code.invalidArgument` when the record type or a column name is not letters, digits
    ///   and `_`, or the columns are too many for one line.
    public init(format: TraceFormat, recordType: String, columns: [String], metadata: TraceMetadata = .init())
        throws(MotionError)
    {
        let valid = { (c: Character) in c.isASCII && (c.isLetter || c.isNumber || c == "_") }
        if let bad = ([recordType] + columns).first(where: { $0.isEmpty || !$0.allSatisfy(valid) }) {
            throw MotionError(.invalidArgument, "record type or column name '\(bad)' must be letters, digits and '_'")
        }
        let reserve = TraceWriter.recordReserve(type: recordType, columns: columns)
        guard reserve <= 32 * 1024 else {
            throw MotionError(.invalidArgument, "\(columns.count) columns are too many or too long for one record line")
        }
        self.sink = .memory
        self.name = "<memory>"
        self.format = format
        self.sensors = []
        self.metadata = metadata
        self.flushing = .whenFull
        self.capacity = 64 * 1024
        self.buffer = .allocate(capacity: capacity)
        self.record = (
            recordType, columns, Array((["t"] + columns).joined(separator: ",").utf8) + [UInt8(ascii: "\n")],
            columns.map { Array(",\"\($0)\":".utf8) }, reserve
        )
    }

    /// Creates a writer that collects its output in memory, in ``writtenBytes`` (for tests and small tools).
    ///
    /// - Parameters:
    ///   - format: CSV or JSON Lines.
    ///   - sensors: The sensor groups to write.
    ///   - metadata: Lines written before the header (CSV) or as the first object (JSON Lines, when not
    ///     empty).
    public init(format: TraceFormat, sensors: SensorSet, metadata: TraceMetadata = .init()) {
        self.sink = .memory
        self.name = "<memory>"
        self.format = format
        self.sensors = sensors
        self.metadata = metadata
        self.flushing = .whenFull
        self.capacity = 4096
        self.buffer = .allocate(capacity: capacity)
        self.record = nil
    }

    deinit {
        try? drain()
        buffer.deallocate()
    }

    /// The bytes a memory writer has produced so far (empty for a file-descriptor writer). The metadata and
    /// header appear once a row or event has been written, or after ``flush()``.
    public var writtenBytes: [UInt8] {
        memory + UnsafeBufferPointer(start: buffer, count: count)
    }

    /// Removes and returns what a memory writer has produced since the last call (empty for a file-descriptor
    /// writer): for a caller that sends the lines on itself, such as a socket it writes without blocking.
    public func takeWrittenBytes() -> [UInt8] {
        guard case .memory = sink else { return [] }
        let bytes = writtenBytes
        memory.removeAll(keepingCapacity: true)
        count = 0
        return bytes
    }

    /// Passes what a memory writer has produced since the last take to `body`, then forgets it (empty for a
    /// file-descriptor writer): ``takeWrittenBytes()`` without a copy, for a caller that sends each line at once.
    package func withTakenBytes<Value, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Value
    ) throws(Failure) -> Value {
        guard case .memory = sink else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        defer {
            memory.removeAll(keepingCapacity: true)
            count = 0
        }
        guard memory.isEmpty else {
            let bytes = writtenBytes
            let result = bytes.withUnsafeBytes { bytes in Result { () throws(Failure) in try body(bytes) } }
            return try result.get()
        }
        return try body(UnsafeRawBufferPointer(start: buffer, count: count))
    }

    /// Writes a whole trace into a string (for tests, examples and small traces).
    ///
    /// - Parameters:
    ///   - samples: The samples, in time order.
    ///   - format: CSV or JSON Lines.
    ///   - sensors: The sensor groups to write.
    ///   - metadata: Lines written before the header (CSV) or as the first object (JSON Lines, when not
    ///     empty).
    /// - Throws: As ``write(_:)``.
    public static func render(
        _ samples: some Sequence<MotionSample>, format: TraceFormat, sensors: SensorSet,
        metadata: TraceMetadata = .init()
    ) throws(MotionError) -> String {
        let writer = TraceWriter(format: format, sensors: sensors, metadata: metadata)
        for sample in samples { try writer.write(sample) }
        try writer.flush()
        return String(decoding: writer.writtenBytes, as: UTF8.self)
    }

    // MARK: - Samples

    /// Appends one sample as a CSV row or a JSON object, writing the metadata and header first if needed.
    ///
    /// Only the groups in ``sensors`` are written; a group the sample has no reading for is left empty (CSV)
    /// or left out (JSON Lines).
    ///
    /// - Throws: `MotionError.Code.invalidArgument` (nothing written) when the timestamp or a written
    ///   reading is not finite, or the timestamp is earlier than the previous sample's;
    ///   `MotionError.Code.ioFailure` when writing fails.
    public func write(_ sample: MotionSample) throws(MotionError) {
        precondition(record == nil, "write(_:) needs a writer of samples; this one writes records")
        if let failure { throw failure }
        try validate(sample)
        if !wrotePreamble { try writePreamble() }
        if capacity - count < TraceWriter.rowReserve { try drain() }
        switch format {
        case .csv: appendCSVRow(sample)
        case .jsonl: appendJSONRow(sample)
        }
        previousTimestamp = sample.timestamp
        if flushing == .eachLine { try drain() }
    }

    @inline(__always)
    private func validate(_ sample: MotionSample) throws(MotionError) {
        if !sample.timestamp.isFinite || sample.timestamp < previousTimestamp
            || sensors.contains(.accelerometer) && !(sample.acceleration?.isFinite ?? true)
            || sensors.contains(.gyroscope) && !(sample.rotationRate?.isFinite ?? true)
            || sensors.contains(.magnetometer) && !(sample.magneticField?.isFinite ?? true)
        {
            throw invalidSample(sample)
        }
    }

    /// The error for a sample that ``validate(_:)`` rejects.
    @inline(never)
    private func invalidSample(_ sample: MotionSample) -> MotionError {
        let location = MotionError.Location(file: name)
        let t = sample.timestamp
        guard t.isFinite else {
            return MotionError(
                .invalidArgument, "cannot write a sample with timestamp \(t); traces hold finite numbers only",
                at: location)
        }
        if t < previousTimestamp {
            return MotionError(
                .invalidArgument,
                "cannot write timestamp \(t) after \(previousTimestamp); timestamps must not decrease", at: location)
        }
        let readings: [(String, (any MotionVector)?)] = [
            ("accelerometer", sample.acceleration), ("gyroscope", sample.rotationRate),
            ("magnetometer", sample.magneticField),
        ]
        let reading = readings.first { !($0.1?.isFinite ?? true) }
        return MotionError(
            .invalidArgument,
            "cannot write the \(reading?.0 ?? "") reading \(reading?.1.map { "\($0)" } ?? "") at t = \(t); traces hold finite numbers only",
            at: location)
    }

    @inline(__always)
    private func appendNumber(_ value: Double) {
        count += DecimalFormatter.write(value, to: buffer + count, powers: powers)
    }

    @inline(__always)
    private func appendByte(_ byte: UInt8) {
        buffer[count] = byte
        count += 1
    }

    @inline(__always)
    private func appendVectorCSV(_ vector: (some MotionVector)?) {
        guard let vector else {
            appendWord(0x2C2C2C, length: 3)  // ",,,"
            return
        }
        appendByte(UInt8(ascii: ","))
        appendNumber(vector.x)
        appendByte(UInt8(ascii: ","))
        appendNumber(vector.y)
        appendByte(UInt8(ascii: ","))
        appendNumber(vector.z)
    }

    private func appendCSVRow(_ sample: MotionSample) {
        appendNumber(sample.timestamp)
        if sensors.contains(.accelerometer) { appendVectorCSV(sample.acceleration) }
        if sensors.contains(.gyroscope) { appendVectorCSV(sample.rotationRate) }
        if sensors.contains(.magnetometer) { appendVectorCSV(sample.magneticField) }
        appendByte(UInt8(ascii: "\n"))
    }

    /// `,"<name>":` for a two-letter key, as 6 bytes of a little-endian word (8-byte stores, 6 bytes kept).
    private static func jsonKey(_ name: StaticString) -> UInt64 {
        let bytes =
            [UInt8(ascii: ","), UInt8(ascii: "\"")] + UnsafeBufferPointer(start: name.utf8Start, count: 2)
            + [UInt8(ascii: "\""), UInt8(ascii: ":")]
        return bytes.reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    private static let jsonKeys: [UInt64] = ["ax", "ay", "az", "gx", "gy", "gz", "mx", "my", "mz"].map(jsonKey)
    private let jsonKeys = TraceWriter.jsonKeys

    @inline(__always)
    private func appendWord(_ word: UInt64, length: Int) {
        UnsafeMutableRawPointer(buffer + count).storeBytes(of: word, as: UInt64.self)
        count &+= length
    }

    @inline(__always)
    private func appendVectorJSON(_ vector: (some MotionVector)?, keys: Int) {
        guard let vector else { return }
        jsonKeys.withUnsafeBufferPointer { keyWords in
            appendWord(keyWords[keys], length: 6)
            appendNumber(vector.x)
            appendWord(keyWords[keys &+ 1], length: 6)
            appendNumber(vector.y)
            appendWord(keyWords[keys &+ 2], length: 6)
            appendNumber(vector.z)
        }
    }

    private func appendJSONRow(_ sample: MotionSample) {
        appendStaticBytes("{\"type\":\"sample\",\"t\":")
        appendNumber(sample.timestamp)
        if sensors.contains(.accelerometer) { appendVectorJSON(sample.acceleration, keys: 0) }
        if sensors.contains(.gyroscope) { appendVectorJSON(sample.rotationRate, keys: 3) }
        if sensors.contains(.magnetometer) { appendVectorJSON(sample.magneticField, keys: 6) }
        appendWord(0x0A7D, length: 2)  // "}\n"
    }

    @inline(__always)
    private func appendRaw(_ bytes: UnsafePointer<UInt8>, _ length: Int) {
        (buffer + count).update(from: bytes, count: length)
        count += length
    }

    @inline(__always)
    private func appendStaticBytes(_ text: StaticString) {
        appendRaw(text.utf8Start, text.utf8CodeUnitCount)
    }

    // MARK: - Records

    /// The buffer room one record line needs at most: each number with its scratch room and its JSON key,
    /// plus the type and punctuation.
    private static func recordReserve(type: String, columns: [String]) -> Int {
        columns.reduce(type.utf8.count + DecimalFormatter.requiredCapacity + 64) {
            $0 + $1.utf8.count + DecimalFormatter.requiredCapacity + 8
        }
    }

    /// Appends one record of a writer made with ``init(fileDescriptor:name:format:recordType:columns:metadata:flushing:)``:
    /// `t` and one value per column, in column order.
    ///
    /// - Precondition: The writer is in record mode and `values` has one value per column.
    /// - Throws: `MotionError.Code.invalidArgument` (nothing written) when a value or the timestamp is not
    ///   finite; `MotionError.Code.ioFailure` when writing fails.
    public func write(recordAt timestamp: Double, values: [Double]) throws(MotionError) {
        guard let record else { preconditionFailure("write(recordAt:values:) needs a writer made with columns") }
        precondition(values.count == record.columns.count, "expected \(record.columns.count) values")
        if let failure { throw failure }
        guard timestamp.isFinite, values.allSatisfy(\.isFinite) else {
            throw MotionError(
                .invalidArgument, "a \(record.type) record at t = \(timestamp) has a value that is not finite",
                at: MotionError.Location(file: name))
        }
        if !wrotePreamble { try writePreamble() }
        if capacity - count < record.reserve { try drain() }
        switch format {
        case .csv:
            appendNumber(timestamp)
            for index in values.indices {
                appendByte(UInt8(ascii: ","))
                appendNumber(values[index])
            }
            appendByte(UInt8(ascii: "\n"))
        case .jsonl:
            appendStaticBytes("{\"type\":\"")
            for byte in record.type.utf8 { appendByte(byte) }
            appendStaticBytes("\",\"t\":")
            appendNumber(timestamp)
            for index in values.indices {
                record.jsonKeys[index].withUnsafeBufferPointer { appendRaw($0.baseAddress!, $0.count) }
                appendNumber(values[index])
            }
            appendWord(0x0A7D, length: 2)  // "}\n"
        }
        if flushing == .eachLine { try drain() }
    }

    // MARK: - Events, metadata and text

    /// Appends an event: in JSON Lines one object `{"type":"<type>","t":<timestamp>,<fields>}`; in CSV the same
    /// object on a comment line, `# event: {…}`, which readers skip.
    ///
    /// Field names should differ from `type` and `t`. A non-finite number is written as `null`. Events do not
    /// take part in the samples' time-order check.
    ///
    /// - Parameters:
    ///   - type: The event type, such as `shake`.
    ///   - timestamp: The event time in seconds, on the samples' clock; must be finite.
    ///   - fields: Further fields, in order.
    /// - Throws: `MotionError.Code.invalidArgument` when `timestamp` is not finite;
    ///   `MotionError.Code.ioFailure` when writing fails.
    public func writeEvent(type: String, timestamp: Double, fields: [(String, EventValue)]) throws(MotionError) {
        if let failure { throw failure }
        guard timestamp.isFinite else {
            throw MotionError(
                .invalidArgument, "cannot write event \"\(type)\" with timestamp \(timestamp); it must be finite",
                at: MotionError.Location(file: name))
        }
        if !wrotePreamble { try writePreamble() }
        var text: [UInt8] = []
        if format == .csv { text += "# event: ".utf8 }
        text += "{\"type\":".utf8
        JSONString.append(type, to: &text)
        text += ",\"t\":".utf8
        appendJSONNumber(timestamp, to: &text)
        for (key, value) in fields {
            text.append(UInt8(ascii: ","))
            JSONString.append(key, to: &text)
            text.append(UInt8(ascii: ":"))
            switch value {
            case .number(let number): appendJSONNumber(number, to: &text)
            case .string(let string): JSONString.append(string, to: &text)
            case .bool(let bool): text += (bool ? "true" : "false").utf8
            }
        }
        text += "}\n".utf8
        try append(text)
        if flushing == .eachLine { try drain() }
    }

    private func appendJSONNumber(_ value: Double, to text: inout [UInt8]) {
        guard value.isFinite else {
            text += "null".utf8
            return
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: DecimalFormatter.requiredCapacity) { scratch in
            let length = DecimalFormatter.write(value, to: scratch.baseAddress!)
            text += UnsafeBufferPointer(start: scratch.baseAddress!, count: length)
        }
    }

    /// Writes the metadata (CSV comment lines, or a JSON object when not empty) and the CSV header.
    private func writePreamble() throws(MotionError) {
        wrotePreamble = true
        var text: [UInt8] = []
        switch format {
        case .csv:
            for line in metadata.lines {
                switch line {
                case .entry(let key, let value):
                    text += "# \(Self.oneLine(key)): \(Self.oneLine(value))\n".utf8
                case .comment(let comment):
                    text += (comment.isEmpty ? "#\n" : "# \(Self.oneLine(comment))\n").utf8
                }
            }
            if let record {
                text += record.csvHeader
            } else {
                text += TraceColumns.names(for: sensors).joined(separator: ",").utf8
                text.append(UInt8(ascii: "\n"))
            }
        case .jsonl:
            guard !metadata.lines.isEmpty else { return }
            text += "{\"type\":\"metadata\",\"lines\":[".utf8
            for (index, line) in metadata.lines.enumerated() {
                if index > 0 { text.append(UInt8(ascii: ",")) }
                switch line {
                case .entry(let key, let value):
                    text += "{\"key\":".utf8
                    JSONString.append(key, to: &text)
                    text += ",\"value\":".utf8
                    JSONString.append(value, to: &text)
                    text.append(UInt8(ascii: "}"))
                case .comment(let comment):
                    text += "{\"comment\":".utf8
                    JSONString.append(comment, to: &text)
                    text.append(UInt8(ascii: "}"))
                }
            }
            text += "]}\n".utf8
        }
        try append(text)
        if flushing == .eachLine { try drain() }
    }

    /// `text` with line breaks replaced by spaces, so a metadata line stays one line.
    private static func oneLine(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }) else { return text }
        return String(text.map { $0 == "\n" || $0 == "\r" || $0 == "\r\n" ? " " : $0 })
    }

    /// Appends bytes of any length, draining the buffer as it fills.
    private func append(_ bytes: [UInt8]) throws(MotionError) {
        var offset = 0
        while offset < bytes.count {
            if count == capacity { try drain() }
            let chunk = min(capacity - count, bytes.count - offset)
            bytes.withUnsafeBufferPointer { (buffer + count).update(from: $0.baseAddress! + offset, count: chunk) }
            count += chunk
            offset += chunk
        }
    }

    // MARK: - Output

    /// Writes everything buffered (and the metadata and header, if not yet written) to the file descriptor.
    ///
    /// - Throws: `MotionError.Code.ioFailure` when writing fails (`EPIPE` when the reader of a pipe has gone).
    public func flush() throws(MotionError) {
        if let failure { throw failure }
        if !wrotePreamble { try writePreamble() }
        try drain()
    }

    private func drain() throws(MotionError) {
        if let failure { throw failure }
        guard count > 0 else { return }
        switch sink {
        case .memory:
            memory += UnsafeBufferPointer(start: buffer, count: count)
        case .descriptor(let fd):
            if case .failure(let error) = SystemCall.writeAll(fd, buffer, count: count) {
                let motionError = MotionError.system(error, "write to", name)
                failure = motionError
                count = 0
                throw motionError
            }
        }
        count = 0
    }
}
