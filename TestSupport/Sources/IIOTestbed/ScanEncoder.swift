/// Packs values into IIO scans the way the kernel lays them out, for feeding emulated devices.
///
/// Written independently of MotionIIO's decoder so that tests compare two implementations: each channel sits at
/// the next multiple of its size (storage bytes × repeat), in index order, and the scan is padded to a multiple
/// of its largest channel. Values are shifted left by the type's shift and truncated to its storage.
public struct ScanEncoder: Sendable {
    struct Channel: Sendable {
        let index: Int
        let bigEndian: Bool
        let storageBytes: Int
        let shift: Int
        let repeatCount: Int
        var offset = 0
    }

    private var channels: [Channel] = []
    /// The bytes of one scan.
    public private(set) var scanSize = 0

    /// Creates an encoder for enabled channels given as `(index, type)`, with types such as `le:s16/16>>0`.
    ///
    /// - Precondition: every type is well formed.
    public init(channels specs: [(index: Int, type: String)]) {
        var parsed: [Channel] = specs.map { spec in
            let text = Array(spec.type.utf8)
            let bigEndian = text.starts(with: Array("be:".utf8))
            let numbers = spec.type.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
            // numbers: bits, storage, [repeat], shift
            precondition(numbers.count == 3 || numbers.count == 4, "malformed scan type \(spec.type)")
            let repeatCount = numbers.count == 4 ? numbers[2] : 1
            return Channel(
                index: spec.index, bigEndian: bigEndian, storageBytes: numbers[1] / 8, shift: numbers.last!,
                repeatCount: repeatCount)
        }
        parsed.sort { $0.index < $1.index }
        var offset = 0
        var largest = 1
        for i in parsed.indices {
            let size = parsed[i].storageBytes * parsed[i].repeatCount
            if offset % size != 0 { offset += size - offset % size }
            parsed[i].offset = offset
            offset += size
            largest = max(largest, size)
        }
        if offset % largest != 0 { offset += largest - offset % largest }
        channels = parsed
        scanSize = offset
    }

    /// One scan: `values[i]` holds the element(s) of the i-th channel in index order (one per repeat).
    /// Padding bytes are 0xEE, so a decoder that reads them gets visibly wrong values.
    public func encode(_ values: [[Int64]]) -> [UInt8] {
        precondition(values.count == channels.count, "one value list per channel")
        var scan = [UInt8](repeating: 0xEE, count: scanSize)
        for (channel, elements) in zip(channels, values) {
            precondition(elements.count == channel.repeatCount, "one value per repeat")
            for (element, value) in elements.enumerated() {
                let stored = UInt64(bitPattern: value) << UInt64(channel.shift)
                let start = channel.offset + element * channel.storageBytes
                for byte in 0..<channel.storageBytes {
                    let shiftBits = UInt64(8 * (channel.bigEndian ? channel.storageBytes - 1 - byte : byte))
                    scan[start + byte] = UInt8(truncatingIfNeeded: stored >> shiftBits)
                }
            }
        }
        return scan
    }

    /// Scans for simple one-element channels: `rows[k][i]` is channel i's value in scan k.
    public func encode(rows: [[Int64]]) -> [UInt8] {
        rows.flatMap { row in encode(row.map { [$0] }) }
    }
}
