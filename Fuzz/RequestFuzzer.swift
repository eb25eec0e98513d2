// libFuzzer entry point for what a client sends `OpenStream(s kind, d interval, s format, a{sv} options)`: built by
// Fuzz/run.sh together with the MotionCore and MotionTrace sources, DBusValue.swift and DBusInterface.swift (pure
// Swift: the sd-bus parts of MotionDBus are not needed), StreamRequest.swift, Motion1Interface.swift and RealModule
// as one module.
//
// The input's bytes are a recipe for the call's arguments: a kind, an interval, a format, the option dictionary as
// the D-Bus value the bus delivers (nested arrays, dictionaries, variants and structures, long strings, many
// entries), and the machine's sensors and frames. The dictionary goes through `propertyEntries` as the service
// takes it, then to `StreamRequest(kind:interval:format:options:available:frames:)`. Checked: no crash or trap; an
// accepted request has a finite interval within (0, `Limits.maximumInterval`], a buffer within its bounds, sensors
// and a frame the machine has, events in JSON Lines; a refusal is a D-Bus error of a known name whose message is
// bounded.

#if canImport(Glibc)
    import Glibc
#endif

/// The limits the invariants check, in one place: StreamRequest's own.
enum Limits {
    /// The longest interval an accepted request may have, in seconds.
    static let maximumInterval = StreamRequest.maximumInterval
    /// The most options an accepted request may have had.
    static let maximumOptionCount = StreamRequest.maximumOptions
    /// The longest refusal message, in bytes: it quotes at most 64 characters of what the client sent.
    static let maximumMessageBytes = 1024
    /// The error names a refusal may carry.
    static let errorNames: Set<String> = ["org.freedesktop.DBus.Error.InvalidArgs", Motion1Interface.unknownSensorError]
    /// The largest string and the most elements the recipe builds (the bus allows far more; these keep a run fast
    /// while going well beyond anything valid).
    static let longString = 70_000
    static let manyElements = 5_000
}

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        // To standard error, unbuffered: a print would still sit in stdout's buffer at the abort.
        fputs("fuzz invariant violated: \(message())\n", stderr)
        abort()
    }
}

/// Reads the recipe: bytes as numbers and choices; zeros once they run out.
private struct Recipe {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0

    mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func integer<T: FixedWidthInteger>(_: T.Type = T.self) -> T {
        var value: T = 0
        for _ in 0..<MemoryLayout<T>.size { value = value << 8 | T(truncatingIfNeeded: byte()) }
        return value
    }

    mutating func choose<T>(_ options: [T]) -> T { options[Int(byte()) % options.count] }

    mutating func double() -> Double {
        switch byte() % 4 {
        case 0:
            return choose([
                0, -0.0, 1e-300, .leastNonzeroMagnitude, 0.001, 0.01, 0.04, 0.04 * (1 - 1e-10), 0.1, 1, 60, 3600, 86400, 1e9, 1e300,
                .greatestFiniteMagnitude, .infinity, -.infinity, .nan, -1, -0.04,
            ])
        case 1: return Double(integer(Int16.self)) / 100
        default: return Double(bitPattern: integer(UInt64.self))
        }
    }

    mutating func string() -> String {
        switch byte() % 8 {
        case 0:
            return choose([
                "samples", "device-motion", "shake", "orientation", "steps", "activity", "csv", "jsonl", "accel",
                "gyro", "mag",
                "accel,gyro", "accel,gyro,mag", "accel,,gyro", " accel ", "", "arbitrary", "arbitrary-corrected",
                "magnetic-north", "true-north", "xMagneticNorthZVertical", "uikit", "iio-sensor-proxy", "sensors",
                "frame", "names", "buffer", "\u{0}", "é", "accel\u{0}",
            ])
        case 1:
            // A long string: a short pattern repeated.
            let pattern = String(decoding: (0..<Int(byte() % 8 + 1)).map { _ in byte() }, as: UTF8.self)
            return String(repeating: pattern.isEmpty ? "x" : pattern, count: Int(integer(UInt16.self)) % Limits.longString)
        default:
            // Raw bytes, possibly not UTF-8 (decoded with replacement characters, as a bus library would refuse them).
            return String(decoding: (0..<Int(byte() % 24)).map { _ in byte() }, as: UTF8.self)
        }
    }

    /// A count: mostly small, sometimes many.
    mutating func count() -> Int {
        let b = byte()
        return b < 240 ? Int(b % 6) : Int(integer(UInt16.self)) % Limits.manyElements
    }

    mutating func value(depth: Int) -> DBusValue {
        let leaf = depth >= 5
        switch byte() % (leaf ? 10 : 15) {
        case 0: return .boolean(byte() & 1 == 1)
        case 1: return .byte(byte())
        case 2: return .int32(integer())
        case 3: return .uint32(choose([0, 1, 2, 1024, 65535, 65536, 65537, UInt32.max, integer()]))
        case 4: return .int64(integer())
        case 5: return .uint64(integer())
        case 6: return .double(double())
        case 7, 8: return .string(string())
        case 9: return byte() & 1 == 0 ? .objectPath(string()) : .fileDescriptor(integer())
        case 10, 11: return .variant(value(depth: depth + 1))
        case 12:
            let elements = (0..<count()).map { _ in value(depth: depth + 1) }
            return .array(elementSignature: elements.first?.signature ?? choose(["s", "v", "{sv}", "u"]), elements)
        case 13: return .dictionaryEntry(value(depth: depth + 1), value(depth: depth + 1))
        default: return .structure((0..<count()).map { _ in value(depth: depth + 1) })
        }
    }

    /// The option dictionary as the bus delivers it: mostly an `a{sv}` of known keys, sometimes anything.
    mutating func options() -> DBusValue {
        switch byte() % 8 {
        case 0: return value(depth: 0)
        case 1:
            // Entries of another shape in a string-keyed array: keys not strings, values not variants.
            let entries = (0..<count()).map { _ in DBusValue.dictionaryEntry(value(depth: 2), value(depth: 2)) }
            return .array(elementSignature: "{sv}", entries)
        default:
            let entries = (0..<count()).map { _ -> (String, DBusValue) in
                let key = byte() % 4 == 0 ? string() : choose(["sensors", "frame", "names", "buffer"])
                let value: DBusValue = switch byte() % 4 {
                case 0: .strings((0..<count()).map { _ in string() })
                case 1: .uint32(choose([0, 1, 1024, 65536, 65537, UInt32.max, integer()]))
                case 2: .string(string())
                default: value(depth: 1)
                }
                return (key, value)
            }
            return .properties(entries)
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var recipe = Recipe(bytes: UnsafeBufferPointer(start: data, count: size))
    let kind = recipe.string()
    let interval = recipe.double()
    let format = recipe.string()
    let dictionary = recipe.options()
    let available = SensorSet(rawValue: recipe.byte() & 7)
    let frames = AttitudeReferenceFrame.allCases.filter { _ in recipe.byte() & 1 == 1 }
    _ = dictionary.signature
    _ = dictionary.description
    guard let options = dictionary.propertyEntries else { return 0 }  // the service refuses a non-dictionary
    do {
        let request = try StreamRequest(
            kind: kind, interval: interval, format: format, options: options, available: available, frames: frames)
        check(request.interval.isFinite && request.interval > 0, "accepted interval \(request.interval)")
        check(request.interval <= Limits.maximumInterval, "accepted interval \(request.interval) above the maximum")
        check(options.count <= Limits.maximumOptionCount, "accepted \(options.count) options")
        check(request.kind.rawValue == kind, "kind \(request.kind) from '\(kind)'")
        check(request.format.rawValue == format, "format \(request.format) from '\(format)'")
        check(
            (1...StreamRequest.maximumBufferLimit).contains(request.bufferLimit),
            "accepted buffer \(request.bufferLimit)")
        switch request.kind {
        case .samples:
            check(!request.sensors.isEmpty && available.isSuperset(of: request.sensors),
                  "samples of \(request.sensors) on a machine with \(available)")
        case .deviceMotion:
            check(frames.contains(request.frame), "device motion in \(request.frame), the machine has \(frames)")
        case .shake, .orientation, .steps, .activity:
            check(request.format == .jsonl, "\(request.kind) events in \(request.format)")
            check(available.contains(.accelerometer), "\(request.kind) events with no accelerometer")
        }
        check(
            request.needsHighRateRight
                == ((request.kind == .samples || request.kind == .deviceMotion)
                    && request.interval < StreamRequest.highRateInterval * (1 - 1e-9)),
            "needsHighRateRight \(request.needsHighRateRight) for \(request.kind) at \(request.interval) s")
    } catch {
        check(Limits.errorNames.contains(error.name), "refused with \(error.name)")
        check(!error.message.isEmpty, "refused with no message")
        check(error.message.utf8.count <= Limits.maximumMessageBytes, "a refusal of \(error.message.utf8.count) bytes")
    }
    return 0
}
