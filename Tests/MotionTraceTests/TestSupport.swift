import MotionCore
import Testing

@testable import MotionTrace

/// A small, seeded pseudo-random generator (SplitMix64), so failures reproduce.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Reads every sample of an in-memory trace.
func readAll(_ text: String, options: TraceReader.Options = .init()) throws(MotionError) -> [MotionSample] {
    let reader = try TraceReader(bytes: Array(text.utf8), name: "test.csv", options: options)
    return try reader.readAll()
}

extension TraceReader {
    /// Every remaining sample.
    func readAll() throws(MotionError) -> [MotionSample] {
        var samples: [MotionSample] = []
        while let sample = try next() { samples.append(sample) }
        return samples
    }
}

/// Reads `text` and returns the error it throws (header or row), or `nil`.
func readError(_ text: String, options: TraceReader.Options = .init()) -> MotionError? {
    do {
        _ = try readAll(text, options: options)
        return nil
    } catch {
        return error
    }
}

/// Options with a small read buffer, so that rows straddle reads.
func smallBuffer(_ size: Int, lenient: Bool = false) -> TraceReader.Options {
    var options = TraceReader.Options(lenient: lenient)
    options.bufferSize = size
    return options
}

/// `DecimalParser.parse` on the UTF-8 of `text`.
func parseNumber(_ text: String) -> Double? {
    Array(text.utf8).withUnsafeBufferPointer { DecimalParser.parse($0) }
}

/// `DecimalFormatter.write` as a string.
func formatNumber(_ value: Double) -> String {
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: DecimalFormatter.requiredCapacity) { buffer in
        let count = DecimalFormatter.write(value, to: buffer.baseAddress!)
        return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<count]), as: UTF8.self)
    }
}

/// A random finite double: any bit pattern, or (half the time) a "sensor-like" value with few digits.
func randomFiniteDouble(using generator: inout SeededGenerator) -> Double {
    while true {
        let value: Double
        switch generator.next() % 4 {
        case 0, 1: value = Double(bitPattern: generator.next())
        case 2: value = Double.random(in: -100...100, using: &generator)
        default:
            let digits = Double(Int64.random(in: -999_999_999...999_999_999, using: &generator))
            value = digits / [1e3, 1e6, 1e9, 1e12][Int(generator.next() % 4)]
        }
        if value.isFinite { return value }
    }
}
