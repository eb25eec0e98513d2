/// The storage format of one buffered IIO channel, parsed from its `scan_elements/in_<channel>_type` attribute.
///
/// The kernel writes `[be|le]:[s|u]bits/storagebits[Xrepeat]>>shift`, for example `le:s12/16>>4` (a 12-bit
/// signed value stored left-aligned in 16 little-endian bits) or `le:s64/64>>0` (a timestamp). The
/// corresponding libiio type is `struct iio_data_format`.
///
/// Decoding a stored element: read `storageBits` in the given byte order, shift right by `shift`, keep the low
/// `bits` bits, and sign-extend them when ``isSigned``. With a repeat count, `repeatCount` such elements follow
/// one another.
package struct ScanElementType: Hashable, Sendable, CustomStringConvertible {
    /// The byte order of stored elements.
    package enum ByteOrder: String, Hashable, Sendable {
        /// Little-endian (`le`).
        case littleEndian = "le"
        /// Big-endian (`be`).
        case bigEndian = "be"
    }

    /// The byte order.
    package var byteOrder: ByteOrder
    /// `true` for two's-complement signed values (`s`), `false` for unsigned (`u`).
    package var isSigned: Bool
    /// The number of significant bits (`realbits`), 1 to ``storageBits``.
    package var bits: Int
    /// The number of stored bits per element: 8, 16, 32 or 64.
    package var storageBits: Int
    /// How far the value is shifted left inside the stored bits.
    package var shift: Int
    /// How many elements the channel stores per scan (the `X<repeat>` form; 1 without it).
    package var repeatCount: Int

    /// Creates a type from its parts.
    ///
    /// - Precondition: `storageBits` is 8, 16, 32 or 64; `1 ≤ bits`, `bits + shift ≤ storageBits`,
    ///   `repeatCount ≥ 1`.
    package init(
        byteOrder: ByteOrder, isSigned: Bool, bits: Int, storageBits: Int, shift: Int = 0, repeatCount: Int = 1
    ) {
        precondition([8, 16, 32, 64].contains(storageBits), "storage bits must be 8, 16, 32 or 64")
        precondition(bits >= 1 && shift >= 0 && bits + shift <= storageBits, "bits and shift must fit the storage")
        precondition(repeatCount >= 1, "the repeat count must be at least 1")
        self.byteOrder = byteOrder
        self.isSigned = isSigned
        self.bits = bits
        self.storageBits = storageBits
        self.shift = shift
        self.repeatCount = repeatCount
    }

    /// Parses the kernel's text, such as `le:s12/16>>4` or `be:u16/16X3>>0`.
    ///
    /// Accepts upper-case `S`/`U` (libiio's "fully defined" spelling), an omitted `>>shift` (shift 0), and
    /// surrounding white space. Returns `nil` for anything else, including storage sizes other than
    /// 8, 16, 32 or 64 bits and values that do not fit their storage.
    package init?(parsing text: some StringProtocol) {
        var scanner = ByteScanner(text)
        scanner.skipSpaces()
        let order: ByteOrder
        if scanner.consume("le:") {
            order = .littleEndian
        } else if scanner.consume("be:") {
            order = .bigEndian
        } else {
            return nil
        }
        let signed: Bool
        switch scanner.next() {
        case UInt8(ascii: "s"), UInt8(ascii: "S"): signed = true
        case UInt8(ascii: "u"), UInt8(ascii: "U"): signed = false
        default: return nil
        }
        guard let bits = scanner.integer(), scanner.consume("/"), let storage = scanner.integer() else { return nil }
        var repeatCount = 1
        if scanner.consume("X") {
            guard let count = scanner.integer() else { return nil }
            repeatCount = count
        }
        var shift = 0
        if scanner.consume(">>") {
            guard let value = scanner.integer() else { return nil }
            shift = value
        }
        scanner.skipSpaces()
        guard scanner.isAtEnd, [8, 16, 32, 64].contains(storage), bits >= 1, bits + shift <= storage,
            repeatCount >= 1
        else { return nil }
        self.init(
            byteOrder: order, isSigned: signed, bits: bits, storageBits: storage, shift: shift,
            repeatCount: repeatCount)
    }

    /// The bytes one stored element takes.
    package var storageBytes: Int { storageBits / 8 }

    /// The bytes the channel takes in a scan: ``storageBytes`` × ``repeatCount``.
    package var byteCount: Int { storageBytes * repeatCount }

    /// The kernel's text for this type, such as `le:s12/16>>4` (`le:s16/16X3>>0` with a repeat count).
    package var description: String {
        let repeatPart = repeatCount > 1 ? "X\(repeatCount)" : ""
        return "\(byteOrder.rawValue):\(isSigned ? "s" : "u")\(bits)/\(storageBits)\(repeatPart)>>\(shift)"
    }

    /// Decodes element `element` (0 ..< ``repeatCount``) of this channel, stored at byte `offset` of `scan`.
    ///
    /// - Precondition: the element lies inside `scan`.
    @inlinable
    package func decode(_ scan: UnsafeRawBufferPointer, at offset: Int, element: Int = 0) -> Int64 {
        let start = offset + element * storageBytes
        precondition(start >= 0 && start + storageBytes <= scan.count, "the element lies outside the scan")
        var stored: UInt64 = 0
        switch (storageBits, byteOrder) {
        case (8, _):
            stored = UInt64(scan.load(fromByteOffset: start, as: UInt8.self))
        case (16, .littleEndian):
            stored = UInt64(UInt16(littleEndian: scan.loadUnaligned(fromByteOffset: start, as: UInt16.self)))
        case (16, .bigEndian):
            stored = UInt64(UInt16(bigEndian: scan.loadUnaligned(fromByteOffset: start, as: UInt16.self)))
        case (32, .littleEndian):
            stored = UInt64(UInt32(littleEndian: scan.loadUnaligned(fromByteOffset: start, as: UInt32.self)))
        case (32, .bigEndian):
            stored = UInt64(UInt32(bigEndian: scan.loadUnaligned(fromByteOffset: start, as: UInt32.self)))
        case (_, .littleEndian):
            stored = UInt64(littleEndian: scan.loadUnaligned(fromByteOffset: start, as: UInt64.self))
        case (_, .bigEndian):
            stored = UInt64(bigEndian: scan.loadUnaligned(fromByteOffset: start, as: UInt64.self))
        }
        stored >>= UInt64(shift)
        if bits < 64 {
            stored &= (1 << UInt64(bits)) &- 1
            if isSigned && stored & (1 << UInt64(bits - 1)) != 0 {
                stored |= ~((1 << UInt64(bits)) &- 1)  // sign-extend
            }
        }
        return Int64(bitPattern: stored)
    }
}

/// Where each enabled channel sits in a buffered scan, following the kernel's `iio_compute_scan_bytes`.
///
/// Channels are laid out in increasing `scan_elements/*_index` order (indices need not be contiguous; only
/// enabled channels take room). Each channel starts at the next multiple of its own size (``ScanElementType/byteCount``,
/// storage × repeat), and the scan is padded to a multiple of its largest channel, so a `le:s64/64` timestamp
/// after three `le:s16/16` values starts at byte 8 and the scan takes 16 bytes. The rounding is the kernel's
/// `ALIGN(x, a) = (x + a − 1) & ~(a − 1)` bit for bit, which is natural alignment whenever the size is a
/// power of two (every channel without a repeat count).
package struct ScanLayout: Hashable, Sendable {
    /// One enabled channel in the scan.
    package struct Element: Hashable, Sendable {
        /// The channel's `scan_elements/*_index`.
        package var index: Int
        /// Its storage format.
        package var type: ScanElementType
        /// Its byte offset from the start of a scan.
        package var offset: Int
    }

    /// The enabled channels, in scan order.
    package var elements: [Element]
    /// The bytes one scan takes, padding included.
    package var scanSize: Int

    /// Lays out enabled channels given as `(index, type)`, in any order.
    ///
    /// - Precondition: the indices are distinct and non-negative.
    package init(channels: [(index: Int, type: ScanElementType)]) {
        let sorted = channels.sorted { $0.index < $1.index }
        var offset = 0
        var largest = 1
        var elements: [Element] = []
        for (position, channel) in sorted.enumerated() {
            precondition(channel.index >= 0, "scan indices are non-negative")
            precondition(position == 0 || sorted[position - 1].index != channel.index, "scan indices are distinct")
            let length = channel.type.byteCount
            offset = ScanLayout.kernelAlign(offset, length)
            elements.append(Element(index: channel.index, type: channel.type, offset: offset))
            offset += length
            largest = max(largest, length)
        }
        self.elements = elements
        self.scanSize = elements.isEmpty ? 0 : ScanLayout.kernelAlign(offset, largest)
    }

    /// The element for scan index `index`, or `nil` when that channel is not enabled.
    package func element(forIndex index: Int) -> Element? {
        elements.first { $0.index == index }
    }

    /// The kernel's `ALIGN(x, a)`: `(x + a − 1) & ~(a − 1)`.
    static func kernelAlign(_ x: Int, _ a: Int) -> Int {
        (x + a - 1) & ~(a - 1)
    }
}

/// A tiny forward scanner over ASCII bytes, for sysfs values.
struct ByteScanner {
    private let bytes: [UInt8]
    private var position = 0

    init(_ text: some StringProtocol) {
        bytes = Array(text.utf8)
    }

    var isAtEnd: Bool { position == bytes.count }

    mutating func next() -> UInt8? {
        guard position < bytes.count else { return nil }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func consume(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard position + count <= bytes.count else { return false }
        let matches = UnsafeBufferPointer(start: literal.utf8Start, count: count).elementsEqual(
            bytes[position..<position + count])
        if matches { position += count }
        return matches
    }

    mutating func skipSpaces() {
        while position < bytes.count, bytes[position] == UInt8(ascii: " ") || bytes[position] == UInt8(ascii: "\t")
            || bytes[position] == UInt8(ascii: "\n")
        {
            position += 1
        }
    }

    /// A non-negative decimal integer of at most 9 digits.
    mutating func integer() -> Int? {
        var value = 0
        var digits = 0
        while position < bytes.count, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9") {
            value = value * 10 + Int(bytes[position] - UInt8(ascii: "0"))
            digits += 1
            position += 1
            if digits > 9 { return nil }
        }
        return digits > 0 ? value : nil
    }
}
