public import MotionCore

/// Reads a trace in the canonical CSV format, one `MotionSample` at a time, in constant memory.
///
/// ## Format
///
/// ```
/// # source: broad-dev
/// # rate_hz: 285.714286
/// # Free text, such as a dataset's attribution.
/// t,ax,ay,az,gx,gy,gz,mx,my,mz
/// 0.0035,-0.0088,-0.0115,-1.0044,0.0031,0.0031,0,0.4058,16.163,-42.704
/// 0.0070,,,,0.0042,0.0021,-0.0053,,,
/// ```
///
/// - Optional leading `#` lines: `# key: value` metadata entries and free-text comments (see
///   ``TraceMetadata``), kept in order in ``metadata``.
/// - One header row naming the columns: `t` (seconds, required) and any of the groups `ax,ay,az` (g),
///   `gx,gy,gz` (rad/s) and `mx,my,mz` (µT), in any order; a group has all three columns or none
///   (see ``TraceColumns``).
/// - One row per instant. Numbers are decimal (`-0.0088`, `0`, `6.5e-19`; see the syntax on
///   `DecimalParser`); `nan`, `inf`, hexadecimal and values beyond the range of `Double` are rejected. A group
///   whose three fields are all empty means the sensor did not sample at that instant (`nil` in the sample); a
///   partly empty group is an error.
/// - Timestamps never decrease (equal timestamps are allowed).
/// - Lines end with LF or CRLF. `#` lines after the header (such as the `# event: {…}` lines a
///   ``TraceWriter`` writes) are skipped.
/// - A last line without a line terminator is accepted when it parses. The reader cannot tell a recording
///   cut inside the final number (`0.12` of `0.125`) from a complete one, so writers always end every line;
///   a last line without terminator that does not parse throws `MotionError.Code.truncatedTrace`.
///
/// ## Errors
///
/// Every error is a `MotionError` whose location names the file (`<stdin>` for standard input), the 1-based
/// line and, when one column is at fault, the column name; the message says what was expected and what was
/// found. Header problems always throw. Row problems throw `MotionError.Code.malformedTrace` from ``next()``
/// at the bad row, so samples already returned stay valid; in lenient mode (``Options/lenient``) bad rows are
/// skipped instead and counted in ``skipReport``.
///
/// ## Performance
///
/// The reader parses bytes in place (no `String` per field) from a reused 256 KiB buffer filled with
/// `read(2)`, so memory does not depend on the file's size.
///
/// A reader is a single-consumer object: it is not `Sendable`.
public final class TraceReader {
    /// How strictly to read.
    public struct Options: Sendable {
        /// Skip bad rows (counting them in ``TraceReader/skipReport``) instead of throwing. Header problems and
        /// I/O errors still throw. Defaults to `false`.
        public var lenient: Bool = false
        /// The read buffer's initial size in bytes (tests use small sizes to split rows between reads).
        var bufferSize: Int = 256 * 1024

        /// Creates options.
        /// - Parameter lenient: Skip and count bad rows instead of throwing.
        public init(lenient: Bool = false) {
            self.lenient = lenient
        }
    }

    /// The name used in errors: the path, `<stdin>`, or the name given to the initialiser.
    public let name: String
    /// The comment lines before the header, in order.
    public let metadata: TraceMetadata
    /// The sensor groups the header names.
    public let sensors: SensorSet
    /// `true` when reading a row never waits for another process (a regular file, bytes in memory): a consumer
    /// may then read rows ahead; from a pipe each row is processed before the next is waited for.
    package var neverWaits: Bool { input.neverWaits }
    /// The header's column names, in file order.
    public let columnNames: [String]
    /// The 1-based line number of the row last returned by ``next()`` (0 before the first row).
    public var lineNumber: Int { rowLine }
    /// The rows skipped so far in lenient mode (always empty in strict mode).
    public var skipReport: SkipReport { skipped }

    private let options: Options
    private let input: LineReader
    private let columnCount: Int
    /// For each column in file order, its slot in `TraceColumns.all` (0 = t, 1–3 = a, 4–6 = g, 7–9 = m).
    private let slots: UnsafeMutablePointer<Int>
    /// For each slot, its column index in file order, or -1.
    private let columnOfSlot: [Int]
    /// The values of the row being parsed, by slot.
    private let values: UnsafeMutablePointer<Double>
    /// Bits of the slots whose columns are absent from the header (reported as empty).
    private let absentSlots: UInt16
    private var previousTimestamp = -Double.infinity
    // Private storage, so that the compiler can check exclusive access statically (no runtime checks per row).
    private var rowLine = 0
    private var skipped: SkipReport

    /// Opens a trace file, or standard input for `"-"`, and reads its comment lines and header.
    ///
    /// - Parameters:
    ///   - path: A file path, or `-` for standard input (named `<stdin>` in errors).
    ///   - options: Strict (default) or lenient reading.
    /// - Throws: `MotionError` with `MotionError.Code.noInput` when the file does not exist or is empty,
    ///   `MotionError.Code.permissionDenied` when it may not be read, `MotionError.Code.ioFailure` for
    ///   other system errors (with a `SystemErrno` underlying), and `MotionError.Code.malformedTrace` for a
    ///   bad header.
    public convenience init(path: String, options: Options = .init()) throws(MotionError) {
        if path == "-" {
            try self.init(source: .descriptor(0, owned: false), name: "<stdin>", options: options)
            return
        }
        switch SystemCall.openForReading(path) {
        case .success(let fd):
            try self.init(source: .descriptor(fd, owned: true), name: path, options: options)
        case .failure(let error):
            throw MotionError.system(error, "open", path)
        }
    }

    /// Reads a trace from an open file descriptor (a pipe, a socket or a file), which it does not close.
    ///
    /// - Parameters:
    ///   - fileDescriptor: A descriptor open for reading, positioned at the start of the trace.
    ///   - name: The name to use in errors, such as `<stdin>`.
    ///   - options: Strict (default) or lenient reading.
    /// - Throws: As ``init(path:options:)``.
    public convenience init(fileDescriptor: Int32, name: String, options: Options = .init()) throws(MotionError) {
        try self.init(source: .descriptor(fileDescriptor, owned: false), name: name, options: options)
    }

    /// Reads a trace held in memory (for tests and fuzzing).
    ///
    /// - Parameters:
    ///   - bytes: The whole trace, UTF-8.
    ///   - name: The name to use in errors.
    ///   - options: Strict (default) or lenient reading.
    /// - Throws: As ``init(path:options:)``.
    public convenience init(bytes: some Sequence<UInt8>, name: String, options: Options = .init()) throws(MotionError) {
        try self.init(source: .memory(Array(bytes), position: 0), name: name, options: options)
    }

    private init(source: LineReader.Source, name: String, options: Options) throws(MotionError) {
        let input = LineReader(source: source, name: name, bufferSize: options.bufferSize)
        var lines: [TraceMetadata.Line] = []
        var header: [UInt8]?
        while let line = try input.nextLine() {
            var text = line.bytes
            if input.lineNumber == 1, text.starts(with: [0xEF, 0xBB, 0xBF]) {  // UTF-8 byte order mark
                text = UnsafeBufferPointer(rebasing: text.dropFirst(3))
            }
            if text.first == UInt8(ascii: "#") {
                lines.append(TraceMetadata.parseLine(UnsafeBufferPointer(rebasing: text.dropFirst())))
                continue
            }
            header = Array(text)
            break
        }
        guard let header else {
            if input.bytesRead == 0 {
                throw MotionError(
                    .noInput, "\(name) is empty; expected comment lines, a header row and data rows",
                    at: MotionError.Location(file: name))
            }
            throw MotionError(
                .malformedTrace,
                "missing header row: expected a line of column names such as t,ax,ay,az after the comment lines, found the end of the input",
                at: MotionError.Location(file: name, line: input.lineNumber + 1))
        }
        let layout = try Self.parseHeader(header, file: name, line: input.lineNumber)

        self.name = name
        self.options = options
        self.input = input
        self.metadata = TraceMetadata(lines: lines)
        self.columnNames = layout.slots.map { TraceColumns.all[$0] }
        self.columnCount = layout.slots.count
        self.sensors = layout.sensors
        var columnOfSlot = [Int](repeating: -1, count: TraceColumns.all.count)
        var absent: UInt16 = 0
        for (column, slot) in layout.slots.enumerated() { columnOfSlot[slot] = column }
        for slot in columnOfSlot.indices where columnOfSlot[slot] < 0 { absent |= 1 << slot }
        self.columnOfSlot = columnOfSlot
        self.absentSlots = absent
        self.slots = .allocate(capacity: layout.slots.count)
        self.slots.initialize(from: layout.slots, count: layout.slots.count)
        self.values = .allocate(capacity: TraceColumns.all.count)
        self.values.initialize(repeating: 0, count: TraceColumns.all.count)
        self.skipped = SkipReport(file: name)
    }

    deinit {
        slots.deallocate()
        values.deallocate()
    }

    // MARK: - Header

    private static func parseHeader(
        _ header: [UInt8], file: String, line: Int
    ) throws(MotionError) -> (slots: [Int], sensors: SensorSet) {
        func error(_ message: String, column: String? = nil) -> MotionError {
            MotionError(.malformedTrace, message, at: MotionError.Location(file: file, line: line, column: column))
        }
        let example = "such as t,ax,ay,az"
        if header.isEmpty { throw error("missing header row: expected column names \(example), found an empty line") }
        let fields = header.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        let startsWithNumber = fields[0].withUnsafeBufferPointer { DecimalParser.parse($0) != nil }
        if startsWithNumber {
            throw error("missing header row: expected column names \(example), found a row of numbers")
        }
        var slots: [Int] = []
        var seen: [Int: Int] = [:]
        for (index, field) in fields.enumerated() {
            let name = String(decoding: field, as: UTF8.self)
            let columnLabel = name.isEmpty ? String(index + 1) : name
            guard let slot = field.withUnsafeBufferPointer({ TraceColumns.slot(of: $0) }) else {
                let known = "known columns are " + TraceColumns.all.joined(separator: ", ")
                if name.isEmpty {
                    throw error("empty column name (column \(index + 1)); \(known)", column: columnLabel)
                }
                throw error("unknown column \(quoted(field)); \(known)", column: columnLabel)
            }
            if let first = seen[slot] {
                throw error(
                    "duplicate column \"\(name)\": columns \(first + 1) and \(index + 1) have the same name",
                    column: name)
            }
            seen[slot] = index
            slots.append(slot)
        }
        guard seen[0] != nil else {
            throw error("no \"t\" column; the header must name a time column t, in seconds, such as t,ax,ay,az")
        }
        var sensors: SensorSet = []
        for (group, sensor) in TraceColumns.groupSensors.enumerated() {
            let groupSlots = (1 + 3 * group)...(3 + 3 * group)
            let present = groupSlots.filter { seen[$0] != nil }
            if present.count == 3 { sensors.insert(sensor) }
            if present.isEmpty || present.count == 3 { continue }
            let missing = groupSlots.filter { seen[$0] == nil }.map { TraceColumns.all[$0] }
            let given = present.map { "\"\(TraceColumns.all[$0])\"" }.joined(separator: " and ")
            let groupNames = groupSlots.map { TraceColumns.all[$0] }.joined(separator: ",")
            throw error(
                "incomplete column group \(groupNames): \(given) without \(missing.map { "\"\($0)\"" }.joined(separator: " and ")); a sensor's three columns go together",
                column: missing[0])
        }
        return (slots, sensors)
    }

    // MARK: - Rows

    /// Returns the next sample, or `nil` at the end of the trace.
    ///
    /// - Throws: `MotionError` with `MotionError.Code.malformedTrace` at a bad row (strict mode),
    ///   `MotionError.Code.truncatedTrace` when a last line without line terminator does not parse (strict
    ///   mode), `MotionError.Code.ioFailure` when reading fails, in either mode. After an error, calling
    ///   `next()` again continues with the following line.
    public func next() throws(MotionError) -> MotionSample? { try nextRow() }

    /// ``next()``'s body, inlined into the trace source's batch read, so that each row is parsed straight into the
    /// batch (a returned sample copied with wider moves than its fields were written with stalls the load).
    @inline(__always)
    func nextRow() throws(MotionError) -> MotionSample? {
        while let line = try input.nextLine() {
            if line.start < line.end, line.start.pointee == UInt8(ascii: "#") { continue }
            do throws(RowProblem) {
                let sample = try parseRow(line)
                rowLine = input.lineNumber
                previousTimestamp = sample.timestamp
                return sample
            } catch {
                let (reason, column, message) = describe(error, line)
                if options.lenient {
                    skipped.record(
                        SkipReport.Example(
                            line: input.lineNumber, column: column,
                            reason: line.terminated ? reason : .truncatedLastLine, message: message))
                    continue
                }
                let location = MotionError.Location(file: name, line: input.lineNumber, column: column)
                if line.terminated { throw MotionError(.malformedTrace, message, at: location) }
                throw MotionError(
                    .truncatedTrace,
                    "the last line has no line terminator and does not parse, so the trace was probably cut off: \(message)",
                    at: location)
            }
        }
        return nil
    }

    /// What is wrong with a row; offsets are relative to the start of the line.
    private enum RowProblem: Error {
        case emptyLine
        case columnCount(found: Int)
        case invalidNumber(column: Int, fieldStart: Int, fieldEnd: Int, outOfRange: Bool)
        case emptyTimestamp
        case partialGroup(emptyColumn: Int, filledColumn: Int)
        case timestampOrder(Double)
    }

    @inline(__always)
    private func parseRow(_ line: LineReader.Line) throws(RowProblem) -> MotionSample {
        var p = line.start
        let end = line.end
        if p == end { throw .emptyLine }
        var empty = absentSlots
        var column = 0
        while true {
            let slot = slots[column]
            if p == end || p.pointee == UInt8(ascii: ",") {
                empty |= 1 << slot
            } else {
                let (value, stop, status) = DecimalParser.parseField(p, end)
                if status != .number {
                    let found = Self.fieldCount(line)
                    if found != columnCount { throw .columnCount(found: found) }
                    var fieldEnd = stop
                    while fieldEnd < end, fieldEnd.pointee != UInt8(ascii: ",") { fieldEnd += 1 }
                    throw .invalidNumber(
                        column: column, fieldStart: p - line.start, fieldEnd: fieldEnd - line.start,
                        outOfRange: status == .outOfRange)
                }
                values[slot] = value
                p = stop
            }
            column &+= 1
            if column == columnCount {
                if p != end { throw .columnCount(found: Self.fieldCount(line)) }
                break
            }
            if p == end { throw .columnCount(found: Self.fieldCount(line)) }
            p += 1
        }
        if empty & 1 != 0 { throw .emptyTimestamp }
        let timestamp = values[0]
        var sample = MotionSample(timestamp: timestamp)
        switch (empty >> 1) & 7 {
        case 0: sample.acceleration = Acceleration(x: values[1], y: values[2], z: values[3])
        case 7: break
        case let bits: throw partialGroup(slotBase: 1, emptyBits: bits)
        }
        switch (empty >> 4) & 7 {
        case 0: sample.rotationRate = RotationRate(x: values[4], y: values[5], z: values[6])
        case 7: break
        case let bits: throw partialGroup(slotBase: 4, emptyBits: bits)
        }
        switch (empty >> 7) & 7 {
        case 0: sample.magneticField = MagneticField(x: values[7], y: values[8], z: values[9])
        case 7: break
        case let bits: throw partialGroup(slotBase: 7, emptyBits: bits)
        }
        if timestamp < previousTimestamp { throw .timestampOrder(timestamp) }
        return sample
    }

    /// The problem for a group whose empty slots are `emptyBits` (some but not all of 3 bits): names the
    /// first empty column and the first filled one, in file order.
    private func partialGroup(slotBase: Int, emptyBits: UInt16) -> RowProblem {
        let groupColumns = (0..<3).map { (columnOfSlot[slotBase + $0], emptyBits & (1 << $0) != 0) }.sorted {
            $0.0 < $1.0
        }
        let emptyColumn = groupColumns.first { $0.1 }!.0
        let filledColumn = groupColumns.first { !$0.1 }!.0
        return .partialGroup(emptyColumn: emptyColumn, filledColumn: filledColumn)
    }

    private static func fieldCount(_ line: LineReader.Line) -> Int {
        var count = 1
        for byte in line.bytes where byte == UInt8(ascii: ",") { count += 1 }
        return count
    }

    private func describe(
        _ problem: RowProblem, _ line: LineReader.Line
    ) -> (SkipReport.Reason, column: String?, message: String) {
        let expectedColumns = "expected \(columnCount) columns (\(columnNames.joined(separator: ",")))"
        switch problem {
        case .emptyLine:
            return (.emptyLine, nil, "\(expectedColumns), found an empty line")
        case .columnCount(let found):
            return (.columnCount, nil, "\(expectedColumns), found \(found)")
        case .invalidNumber(let column, let fieldStart, let fieldEnd, let outOfRange):
            let field = UnsafeBufferPointer(rebasing: line.bytes[fieldStart..<fieldEnd])
            let suffix = outOfRange ? ", which is beyond the range of a Double" : ""
            return (.invalidNumber, columnNames[column], "expected a finite number, found \(quoted(field))\(suffix)")
        case .emptyTimestamp:
            return (.invalidNumber, "t", "expected a finite number, found an empty field; every row needs a timestamp")
        case .partialGroup(let emptyColumn, let filledColumn):
            let group = slots[emptyColumn]
            let base = 1 + 3 * ((group - 1) / 3)
            let groupNames = TraceColumns.all[base..<(base + 3)].joined(separator: ",")
            return (
                .partialGroup, columnNames[emptyColumn],
                "partly empty column group \(groupNames): \"\(columnNames[emptyColumn])\" is empty but \"\(columnNames[filledColumn])\" is not; leave all three empty when the sensor did not sample"
            )
        case .timestampOrder(let timestamp):
            return (
                .timestampOrder, "t",
                "timestamp \(timestamp) is earlier than the previous row's \(previousTimestamp); timestamps must not decrease"
            )
        }
    }
}

/// `"text"` for an error message: at most 40 bytes, printable ASCII kept, `"` and `\` escaped, other bytes
/// as `\xNN`.
func quoted(_ bytes: some Collection<UInt8>) -> String {
    var text = "\""
    for byte in bytes.prefix(40) {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"):
            text += "\\" + String(UnicodeScalar(byte))
        case 0x20...0x7E:
            text.unicodeScalars.append(UnicodeScalar(byte))
        default:
            let hex = String(byte, radix: 16, uppercase: true)
            text += "\\x" + (hex.count == 1 ? "0" + hex : hex)
        }
    }
    text += bytes.count > 40 ? "…\"" : "\""
    return text
}
