#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Parses decimal numbers straight from bytes, with the same result as `Double(String)`, bit for bit.
///
/// Syntax (nothing else is accepted: no spaces, `nan`, `inf`, hexadecimal, `.5` or `5.`):
///
///     number   = [ "+" | "-" ] digits [ "." digits ] [ ( "e" | "E" ) [ "+" | "-" ] digits ]
///     digits   = one or more of 0-9
///
/// Numbers with at most 19 digits, a mantissa no larger than 2⁵³ and a decimal exponent within ±22 take
/// Clinger's fast path: the mantissa and the power of ten are both exact doubles, so one correctly
/// rounded multiplication or division gives the correctly rounded result. Every other number is handed to
/// `strtod(3)` after the syntax has been checked, rewritten without its decimal point (`12.5e3` → `125e2`) so
/// the result does not depend on the C locale's decimal separator.
enum DecimalParser {
    /// The outcome of parsing one field.
    enum Status: UInt8 {
        /// A finite number.
        case number
        /// Not the number syntax above.
        case invalid
        /// Valid syntax, but too large in magnitude for a finite `Double` (such as `1e999`).
        case outOfRange
    }

    /// 10⁰ … 10²², every one exactly representable as a `Double`.
    static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    /// Parses the field that starts at `start` and ends at the first comma or at `end`.
    ///
    /// The byte at `end` must be readable and must not be a digit, `.`, `e`, `E`, `+`, `-` or `,` (a line
    /// terminator or a 0 sentinel), so the digit loops need no bounds checks; the 16 bytes after `end` must be
    /// readable too, as digits are examined 8 bytes at a time (the reader's buffer has that padding).
    ///
    /// - Returns: The value (meaningful only for ``Status/number``), the position of the comma or `end` that
    ///   ends the field (for ``Status/invalid``, the first byte that broke the syntax), and the status.
    @inline(__always)
    static func parseField(
        _ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>
    ) -> (value: Double, stop: UnsafePointer<UInt8>, status: Status) {
        // Branch-free sign: the sign of real data is unpredictable. '+' is 0x2B, '-' is 0x2D.
        let first = start.pointee
        let negative = first == UInt8(ascii: "-")
        var p = start + ((first &- 0x2B) & 0xFD == 0 ? 1 : 0)

        let digitsStart = p
        var mantissa: UInt64 = 0  // exact while there are at most 19 significant digits
        while true {
            let digit = p.pointee &- UInt8(ascii: "0")
            if digit > 9 { break }
            mantissa = mantissa &* 10 &+ UInt64(digit)
            p += 1
        }
        let integerDigits = p - digitsStart
        if integerDigits == 0 { return (0, p, .invalid) }

        var fractionDigits = 0
        if p.pointee == UInt8(ascii: ".") {
            p += 1
            let fractionStart = p
            var word = UnsafeRawPointer(p).loadUnaligned(as: UInt64.self)
            var count = leadingDigitCount(word)
            while count == 8 {
                mantissa = mantissa &* 100_000_000 &+ valueOfEightDigits(word)
                p += 8
                word = UnsafeRawPointer(p).loadUnaligned(as: UInt64.self)
                count = leadingDigitCount(word)
            }
            mantissa = mantissa &* integerPowersOfTen[count] &+ valueOfDigits(word, count: count)
            p += count
            fractionDigits = p - fractionStart
            if fractionDigits == 0 { return (0, p, .invalid) }
        }
        var exponent = 0 &- fractionDigits  // the value is mantissa · 10^exponent

        var explicitExponent = 0
        if p.pointee | 0x20 == UInt8(ascii: "e") {
            p += 1
            let exponentSign = p.pointee
            let exponentNegative = exponentSign == UInt8(ascii: "-")
            if exponentNegative || exponentSign == UInt8(ascii: "+") { p += 1 }
            let exponentStart = p
            while true {
                let digit = p.pointee &- UInt8(ascii: "0")
                if digit > 9 { break }
                // Saturate: beyond 10⁸ every result is 0 or out of range anyway (lines are at most 1 MiB).
                if explicitExponent < 100_000_000 { explicitExponent = explicitExponent &* 10 &+ Int(digit) }
                p += 1
            }
            if p == exponentStart { return (0, p, .invalid) }
            if exponentNegative { explicitExponent = 0 &- explicitExponent }
            exponent &+= explicitExponent
        }

        if p != end, p.pointee != UInt8(ascii: ",") { return (0, p, .invalid) }

        // Clinger's fast path. Leading zeros are in `mantissa` harmlessly; more than 19 digits in all may have
        // wrapped it, so those numbers go the slow way (as do zeros with huge exponents such as 0e999).
        if integerDigits &+ fractionDigits <= 19 && mantissa <= 1 << 53 && UInt(bitPattern: exponent &+ 22) <= 44 {
            let power = powersOfTen.withUnsafeBufferPointer { $0[exponent < 0 ? 0 &- exponent : exponent] }
            let magnitude = exponent < 0 ? Double(mantissa) / power : Double(mantissa) * power
            let sign: UInt64 = negative ? 1 << 63 : 0
            return (Double(bitPattern: magnitude.bitPattern | sign), p, .number)
        }
        let value = slowPath(
            negative: negative, digits: digitsStart, integerDigits: integerDigits, fractionDigits: fractionDigits,
            exponent: explicitExponent - fractionDigits)
        return (value, p, value.isFinite ? .number : .outOfRange)
    }

    /// How many readable bytes ``parseField(_:_:)`` needs after the end of its input (the first one a
    /// sentinel).
    static let padding = 16

    /// 10⁰ … 10⁸ as integers.
    static let integerPowersOfTen: [UInt64] = [1, 10, 100, 1000, 10000, 100_000, 1_000_000, 10_000_000, 100_000_000]

    /// The value of the first `count` (0…7) ASCII digits of `word` (little-endian).
    @inline(__always)
    static func valueOfDigits(_ word: UInt64, count: Int) -> UInt64 {
        // Move the digits to the top bytes and fill the bottom with "0": the same value in 8 digits. The
        // shift is split so that count 0 shifts by 64 in total, giving 0.
        let shift = UInt64(truncatingIfNeeded: 56 &- 8 &* count)
        let aligned = ((word &<< shift) &<< 8) | (0x3030_3030_3030_3030 &>> UInt64(truncatingIfNeeded: 8 &* count))
        return valueOfEightDigits(aligned)
    }

    /// The number of ASCII digits at the start of `word` (little-endian: its lowest bytes), 0…8.
    @inline(__always)
    static func leadingDigitCount(_ word: UInt64) -> Int {
        // A digit byte (0x30…0x39) has high nibble 3, and keeps it when 6 is added. Bytes after the first
        // non-digit may be misjudged (a carry out of it), which does not matter here.
        let nibbles = (word & 0xF0F0_F0F0_F0F0_F0F0) | (((word &+ 0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0) >> 4)
        let difference = nibbles ^ 0x3333_3333_3333_3333  // zero bytes are digits
        let nonDigits =
            (((difference & 0x7F7F_7F7F_7F7F_7F7F) &+ 0x7F7F_7F7F_7F7F_7F7F) | difference) & 0x8080_8080_8080_8080
        return nonDigits.trailingZeroBitCount >> 3
    }

    /// The value of 8 ASCII digits loaded little-endian (the first digit in the lowest byte), 0…99 999 999.
    @inline(__always)
    static func valueOfEightDigits(_ word: UInt64) -> UInt64 {
        var v = word &- 0x3030_3030_3030_3030
        v = v &* 10 &+ (v >> 8)  // bytes 0, 2, 4, 6 now hold two-digit values
        let pairs02 = (v & 0x0000_00FF_0000_00FF) &* (100 &+ (1_000_000 << 32))
        let pairs13 = ((v >> 16) & 0x0000_00FF_0000_00FF) &* (1 &+ (10_000 << 32))
        return (pairs02 &+ pairs13) >> 32
    }

    /// Parses all of `bytes` as one number; `nil` unless it is a finite number in the syntax above.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        guard !bytes.isEmpty else { return nil }
        // Copy with the zero padding `parseField` reads past the end.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bytes.count + padding) { padded in
            let base = padded.baseAddress!
            base.initialize(from: bytes.baseAddress!, count: bytes.count)
            (base + bytes.count).initialize(repeating: 0, count: padding)
            let end = UnsafePointer(base + bytes.count)
            let (value, stop, status) = parseField(UnsafePointer(base), end)
            guard status == .number, stop == end else { return nil }
            return value
        }
    }

    /// Converts with `strtod(3)`: writes `[-]<all digits>e<exponent>` (no decimal point) into a NUL-terminated
    /// scratch buffer. `digits` points at the integer digits; the fraction digits follow after one `.`.
    @inline(never)
    private static func slowPath(
        negative: Bool, digits: UnsafePointer<UInt8>, integerDigits: Int, fractionDigits: Int, exponent: Int
    ) -> Double {
        let capacity = integerDigits + fractionDigits + 32
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: capacity) { scratch in
            let text = UnsafeMutableRawPointer(scratch.baseAddress!).assumingMemoryBound(to: UInt8.self)
            var count = 0
            if negative {
                text[0] = UInt8(ascii: "-")
                count = 1
            }
            (text + count).update(from: digits, count: integerDigits)
            count += integerDigits
            if fractionDigits > 0 {
                (text + count).update(from: digits + integerDigits + 1, count: fractionDigits)
                count += fractionDigits
            }
            text[count] = UInt8(ascii: "e")
            count += 1
            var magnitude = exponent.magnitude
            if exponent < 0 {
                text[count] = UInt8(ascii: "-")
                count += 1
            }
            var reversed: [UInt8] = []
            repeat {
                reversed.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
                magnitude /= 10
            } while magnitude > 0
            for byte in reversed.reversed() {
                text[count] = byte
                count += 1
            }
            text[count] = 0
            return strtod(scratch.baseAddress!, nil)
        }
    }
}
