// libFuzzer entry point for the segment files of a history store (`MotionStore`), built by Fuzz/run.sh together
// with the MotionCore sources and MotionStore's format (CRC32C.swift, StoreFormat.swift) as one module.
//
// Each input is a segment's bytes, as `StoreReader` reads them from a store another process may have written or
// damaged. `FrameScan.items` must cover the input exactly, in order, with frames and damaged ranges that neither
// overlap nor leave a gap; every samples frame it finds is either refused with a reason or decodes to samples
// with finite, non-decreasing times, finite readings and at least one sensor, which a writer encodes again into
// a frame that decodes to the same samples and clock offset; every header frame decodes, or is refused, the same
// way; every device-motion and events frame is refused with a reason or decodes to records (finite, in time order,
// unit attitudes) that a writer encodes again into exactly the same bytes. Plus no crash, leak-free memory access
// (ASan) and no timeout.

#if canImport(Glibc)
    import Glibc
#endif

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        fputs("fuzz invariant violated: \(message())\n", stderr)
        abort()
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStore(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    var covered = 0
    for item in FrameScan.items(bytes) {
        switch item {
        case .damage(let range, let reason):
            check(range.lowerBound == covered && range.upperBound > range.lowerBound, "damage \(range) after \(covered)")
            check(!reason.isEmpty, "damage without a reason")
            covered = range.upperBound
        case .frame(let kind, let payload):
            check(
                payload.lowerBound == covered + StoreFormat.frameHeaderSize && payload.upperBound > payload.lowerBound,
                "frame payload \(payload) after \(covered)")
            covered = payload.upperBound
            let contents = UnsafeRawBufferPointer(rebasing: bytes[payload])
            switch kind {
            case .segmentHeader:
                guard case .success(let header) = FrameScan.header(contents) else { continue }
                check(header.created.isFinite, "a header created at \(header.created)")
                let again = StoreFormat.headerFrame(created: header.created, label: header.label)
                let decoded = again.withUnsafeBytes { FrameScan.header(.init(rebasing: $0[StoreFormat.frameHeaderSize...])) }
                guard case .success(let second) = decoded else { check(false, "a header frame written again is refused"); return 0 }
                check(second.created == header.created, "the creation time changed")
                // A label cut inside a character may decode to replacement characters, which are longer: compare
                // only what fits.
                check(second.label == header.label || again.count >= StoreFormat.maximumLabelBytes, "the label changed")
            case .message:
                guard case .success(let message) = FrameScan.message(contents) else { continue }
                var payload: [UInt8] = [StoreFormat.Kind.message.rawValue]
                payload.appendLittleEndian(UInt16(message.topic.utf8.count))
                payload += Array(message.topic.utf8) + message.bytes
                check(payload.count == contents.count && payload.elementsEqual(contents), "a message frame changed when written again")
            case .samples:
                guard case .success(let frame) = FrameScan.samples(contents) else { continue }
                check(frame.offset.isFinite, "offset \(frame.offset)")
                var previous = -Double.infinity
                var builder = RecordFrameBuilder()
                for sample in frame.samples {
                    check(sample.timestamp.isFinite && sample.timestamp >= previous, "time \(sample.timestamp) after \(previous)")
                    previous = sample.timestamp
                    let readings = [sample.acceleration?.vector, sample.rotationRate?.vector, sample.magneticField?.vector]
                        .compactMap { $0 }
                    check(!readings.isEmpty, "a sample without a reading")
                    check(readings.allSatisfy { $0.x.isFinite && $0.y.isFinite && $0.z.isFinite }, "a reading not finite")
                    builder.append(sample)
                }
                builder.finish(clockOffset: frame.offset)
                let decoded = builder.bytes.withUnsafeBytes {
                    FrameScan.samples(.init(rebasing: $0[StoreFormat.frameHeaderSize...]))
                }
                guard case .success(let second) = decoded else { check(false, "a samples frame written again is refused"); return 0 }
                check(second.offset == frame.offset && second.samples == frame.samples, "a samples frame changed when written again")
            case .deviceMotion:
                guard case .success(let frame) = FrameScan.deviceMotion(contents) else { continue }
                var builder = RecordFrameBuilder(.deviceMotion)
                var previous = -Double.infinity
                for motion in frame.motion {
                    check(motion.timestamp.isFinite && motion.timestamp >= previous, "time \(motion.timestamp) after \(previous)")
                    previous = motion.timestamp
                    let q = motion.attitude.quaternion
                    check(abs((q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z).squareRoot() - 1) < 1e-5, "not a rotation")
                    builder.append(motion)
                }
                builder.finish(clockOffset: frame.offset)
                check(builder.bytes[StoreFormat.frameHeaderSize...].elementsEqual(contents), "a device-motion frame changed when written again")
            case .events:
                guard case .success(let frame) = FrameScan.events(contents) else { continue }
                var builder = RecordFrameBuilder(.events)
                var previous = -Double.infinity
                for event in frame.events {
                    check(event.timestamp.isFinite && event.timestamp >= previous, "time \(event.timestamp) after \(previous)")
                    previous = event.timestamp
                    check(!event.type.isEmpty && event.fields.allSatisfy { !$0.0.isEmpty }, "an empty type or key")
                    builder.append(event: event.type, timestamp: event.timestamp, fields: event.fields)
                }
                builder.finish(clockOffset: frame.offset)
                check(builder.bytes[StoreFormat.frameHeaderSize...].elementsEqual(contents), "an events frame changed when written again")
            }
        }
    }
    check(covered == size, "the items cover \(covered) of \(size) bytes")
    return 0
}
