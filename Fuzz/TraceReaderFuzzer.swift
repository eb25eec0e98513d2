// libFuzzer entry point for the trace reader, built by Fuzz/run.sh together with the MotionCore and
// MotionTrace sources as one module (so internal API such as `Options.bufferSize` is visible).
//
// Each input is read three times: strict with the default 256 KiB buffer, strict with a tiny buffer (1–61 bytes,
// chosen from the input's size, so rows straddle every possible read boundary), and lenient. The two strict
// reads must agree exactly (same samples, same error); every sample must be finite with non-decreasing
// timestamps; a lenient read must never throw a row error.

#if canImport(Glibc)
    import Glibc
#endif

/// What one read produced: the samples and the final error's description, if any.
private struct Outcome: Equatable {
    var samples: [MotionSample] = []
    var lineNumbers: [Int] = []
    var error: String?
    var code: String?
}

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        // To standard error, unbuffered: a print would still sit in stdout's buffer at the abort.
        fputs("fuzz invariant violated: \(message())\n", stderr)
        abort()
    }
}

private func read(_ bytes: UnsafeBufferPointer<UInt8>, options: TraceReader.Options) -> Outcome {
    var outcome = Outcome()
    do {
        let reader = try TraceReader(bytes: bytes, name: "fuzz", options: options)
        check(reader.columnNames.first == "t" || reader.columnNames.contains("t"), "no t column accepted")
        _ = reader.metadata.lines.count
        var previous = -Double.infinity
        while let sample = try reader.next() {
            check(sample.timestamp.isFinite, "non-finite timestamp")
            check(sample.timestamp >= previous, "timestamps decrease: \(sample.timestamp) after \(previous)")
            check(sample.acceleration?.isFinite ?? true, "non-finite acceleration")
            check(sample.rotationRate?.isFinite ?? true, "non-finite rotation rate")
            check(sample.magneticField?.isFinite ?? true, "non-finite magnetic field")
            check(reader.sensors.isSuperset(of: sample.sensors), "sample has a sensor the header lacks")
            previous = sample.timestamp
            outcome.samples.append(sample)
            outcome.lineNumbers.append(reader.lineNumber)
        }
        if options.lenient {
            let report = reader.skipReport
            check(report.counts.values.reduce(0, +) == report.skippedRows, "skip counts do not add up")
            _ = report.description
        } else {
            check(reader.skipReport.skippedRows == 0, "strict reader skipped rows")
        }
    } catch {
        outcome.error = error.description
        outcome.code = error.code.description
    }
    return outcome
}

@_cdecl("LLVMFuzzerTestOneInput")
public func traceReaderFuzzTest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let strict = read(bytes, options: TraceReader.Options())
    var small = TraceReader.Options()
    small.bufferSize = 1 + size % 61
    let strictSmallBuffer = read(bytes, options: small)
    check(
        strict == strictSmallBuffer,
        "buffer size changes the result: \(strict.error ?? "-") vs \(strictSmallBuffer.error ?? "-")")
    var lenient = TraceReader.Options(lenient: true)
    lenient.bufferSize = 1 + size % 37
    let lenientOutcome = read(bytes, options: lenient)
    if let code = lenientOutcome.code {
        check(code != "malformedTrace" || strict.code == "malformedTrace", "lenient row error")
    }
    // Lenient mode returns at least the rows strict mode returned before its error.
    check(lenientOutcome.samples.starts(with: strict.samples), "lenient lost rows that strict mode accepted")
    return 0
}
