/// Writes finite doubles as the shortest decimal text that reads back as the same double.
///
/// ## Digits
///
/// The digits are the shortest that round-trip and, among those, the closest to the value (the same digits as
/// Swift's `description`, JavaScript, Ryu).
///
/// Values with at most 9–10 significant digits, which is what sensor data read from text usually has, take a
/// fast path: one multiplication by a power of ten, rounding, and a check by Clinger's argument that the
/// decimal reads back as the value (see ``write(_:to:powers:)``).
///
/// All other values use Raffaello Giulietti's Schubfach algorithm ("The
/// Schubfach way to render doubles", 2020): for `v = c · 2^q`, pick `k = ⌊log₁₀ 2^q⌋` so that the rounding
/// interval of `v`, measured in units of `10^k`, is between 1 and 10 units wide. Then at most one multiple of
/// `10^(k+1)` lies inside it (if one does, it is the shortest), and otherwise the shortest decimals are the
/// multiples of `10^k` next to `v`, of which the closest is taken (ties to even). The scaled values come from
/// one 64 × 126-bit product per bound with a 126-bit approximation of `10^-k` (``PowersOfTen``), rounded to
/// odd, which keeps every comparison with an even integer exact.
///
/// ## Layout
///
/// As JavaScript's `Number.prototype.toString`, so the text is valid JSON and valid in a trace. With `n`
/// digits and the value `0.d₁…dₙ × 10^p`:
///
/// - `n ≤ p ≤ 21`: the digits and `p − n` zeros (`100`, `123000`; no `.0`),
/// - `0 < p ≤ 21`: a decimal point after `p` digits (`1.5`, `186.3365`),
/// - `−6 < p ≤ 0`: `0.`, `−p` zeros and the digits (`0.0035`, `0.000001`),
/// - otherwise the exponent form `d₁.d₂…dₙe±(p−1)` (`1e-7`, `6.52338106e-19`, `1.5e+300`),
///
/// with a leading `-` for negative values, including negative zero (`-0`), so it reads back bit-identical.
///
/// Digits are converted 8 at a time in a 64-bit register and copied with 8-byte stores, so the output area
/// needs ``requiredCapacity`` bytes of room even though the text is at most 24 bytes. Nothing allocates.
enum DecimalFormatter {
    /// The room ``write(_:to:powers:)`` needs at its output (the longest text,
    /// `-1.2345678901234567e-308`, is 24 bytes; the 8-byte stores may write up to 40 bytes).
    static let requiredCapacity = 48

    /// 10⁰ … 10¹⁹.
    private static let integerPowersOfTen: [UInt64] = [
        1, 10, 100, 1000, 10000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000, 10_000_000_000,
        100_000_000_000, 1_000_000_000_000, 10_000_000_000_000, 100_000_000_000_000, 1_000_000_000_000_000,
        10_000_000_000_000_000, 100_000_000_000_000_000, 1_000_000_000_000_000_000, 10_000_000_000_000_000_000,
    ]

    /// Writes the text of a finite `value` at `out`, which must have room for ``requiredCapacity`` bytes.
    ///
    /// - Parameter powers: The table of ``PowersOfTen/shared`` (passed in so hot loops load it once).
    /// - Returns: The number of bytes of text.
    @inline(__always)
    static func write(_ value: Double, to out: UnsafeMutablePointer<UInt8>, powers: PowersOfTen) -> Int {
        let bits = value.bitPattern
        let negative = Int(truncatingIfNeeded: bits >> 63)
        out[0] = UInt8(ascii: "-")
        let text = out + negative
        let magnitude = Double(bitPattern: bits & (1 << 63 - 1))
        let biasedExponent = Int(truncatingIfNeeded: (bits >> 52) & 0x7FF)

        // Fast path, for values that were read from text with at most 9–10 significant digits (as sensor data
        // usually is). v is in [2^e, 2^(e+1)), so in [10^d, 2 · 10^(d+1)) with d = ⌊e · log₁₀ 2⌋; with
        // k = 8 − d, the candidate m = round(v · 10^k) lies in [10⁸, 2 · 10⁹]. It is checked by computing
        // m / 10^k (or m · 10^-k): m and 10^|k| (|k| ≤ 22) are exact doubles, so that one operation gives the
        // correctly rounded value of the decimal, which is what every correct parser returns (Clinger).
        // Decimals on this grid are more than an ulp apart, so only one can read back as v; dropping its
        // trailing zeros gives the shortest, which is then also the closest.
        let k = 8 &- floorLog10Pow2(biasedExponent &- 1023)
        if biasedExponent != 0 && UInt(bitPattern: k &+ 22) <= 44 {
            let power = powersOfTen.withUnsafeBufferPointer { $0[k < 0 ? -k : k] }
            let scaled = k >= 0 ? magnitude * power : magnitude / power
            let shifted = scaled + 0x1p52  // rounds to an integer, ties to even, as scaled < 2^52
            let m = shifted - 0x1p52
            let readBack = k >= 0 ? m / power : m * power
            if readBack == magnitude {
                return negative &+ writeShort(shifted.bitPattern & (1 << 52 - 1), exponent: -k, to: text)
            }
        }
        if bits << 1 == 0 {
            text[0] = UInt8(ascii: "0")
            return negative &+ 1
        }
        // v = c · 2^q; subnormals have no hidden bit and the minimum exponent.
        let fraction = bits & (1 << 52 - 1)
        let c = biasedExponent == 0 ? fraction : fraction | 1 << 52
        let q = biasedExponent == 0 ? -1074 : biasedExponent &- 1075
        let (digits, exponent) = shortest(significand: c, exponent: q, powers: powers)
        return negative &+ layout(digits: digits, exponent: exponent, to: text)
    }

    /// 10⁰ … 10²², exact doubles.
    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    /// Writes the text of a finite `value` (convenience for tests and cold paths).
    static func write(_ value: Double, to out: UnsafeMutablePointer<UInt8>) -> Int {
        write(value, to: out, powers: .shared)
    }

    // MARK: - Schubfach

    /// ⌊q · log₁₀ 2⌋ for |q| ≤ 1100.
    @inline(__always)
    static func floorLog10Pow2(_ q: Int) -> Int { (q &* 661_971_961_083) >> 41 }

    /// ⌊log₁₀(¾ · 2^q)⌋ for |q| ≤ 1100.
    @inline(__always)
    static func floorLog10ThreeQuartersPow2(_ q: Int) -> Int { (q &* 661_971_961_083 &- 274_743_187_321) >> 41 }

    /// ⌊e · log₂ 10⌋ for |e| ≤ 400.
    @inline(__always)
    static func floorLog2Pow10(_ e: Int) -> Int { (e &* 913_124_641_741) >> 38 }

    /// The shortest closest decimal `digits · 10^exponent` for the positive double `c · 2^q`; `digits` may
    /// have trailing zeros, which ``layout(digits:exponent:to:)`` drops.
    @inline(__always)
    static func shortest(
        significand c: UInt64, exponent q: Int, powers: PowersOfTen
    ) -> (digits: UInt64, exponent: Int) {
        // All arithmetic below stays far from overflow: c < 2^53, h ≤ 8, products fit in 64 bits.
        let out: UInt64 = c & 1  // odd significand: the bounds of the rounding interval round away from v
        let cb = c &<< 2
        let cbr = cb &+ 2
        let cbl: UInt64
        let k: Int
        if c != 1 << 52 || q == -1074 {
            cbl = cb &- 2
            k = floorLog10Pow2(q)
        } else {
            // At a power of two the lower neighbour is half as far away.
            cbl = cb &- 1
            k = floorLog10ThreeQuartersPow2(q)
        }
        let h = UInt64(truncatingIfNeeded: q &+ floorLog2Pow10(-k) &+ 2)
        let (g1, g0) = powers[k]
        // The value and its bounds times 4 · 10^-k, rounded to odd.
        let vb = roundToOdd(g1, g0, cb &<< h)
        let vbl = roundToOdd(g1, g0, cbl &<< h)
        let vbr = roundToOdd(g1, g0, cbr &<< h)

        let s = vb &>> 2  // ⌊v · 10^-k⌋
        // A multiple of 10^(k+1) in the interval is the shortest (at most one fits).
        let sp10 = (s / 10) &* 10
        let tp10 = sp10 &+ 10
        let lowerIn = vbl &+ out <= sp10 &<< 2
        let upperIn = (tp10 &<< 2) &+ out <= vbr
        if lowerIn != upperIn { return (lowerIn ? sp10 : tp10, k) }
        // Otherwise the multiples of 10^k on either side of v; the closer one when both are in.
        let t = s &+ 1
        let sIn = vbl &+ out <= s &<< 2
        let tIn = (t &<< 2) &+ out <= vbr
        if sIn != tIn { return (sIn ? s : t, k) }
        let midpoint = (s &+ t) &<< 1  // 4 · (s + ½)
        return (vb < midpoint || (vb == midpoint && s & 1 == 0) ? s : t, k)
    }

    /// `⌊g · cp / 2^127⌋`, with its lowest bit set when the discarded part (above the lowest 64 bits) is not
    /// zero; `g = g1 · 2^63 + g0`.
    @inline(__always)
    private static func roundToOdd(_ g1: UInt64, _ g0: UInt64, _ cp: UInt64) -> UInt64 {
        let x1 = g0.multipliedFullWidth(by: cp).high
        let (y1, y0) = g1.multipliedFullWidth(by: cp)
        let z = (y0 >> 1) &+ x1
        let vbp = y1 &+ (z >> 63)
        return vbp | (((z & (1 << 63 - 1)) &+ (1 << 63 - 1)) >> 63)
    }

    // MARK: - Layout

    /// Eight ASCII digits of `value` (< 10⁸), most significant first in memory (little-endian word).
    @inline(__always)
    static func eightDigits(_ value: UInt64) -> UInt64 {
        // Split into 4-digit halves in 32-bit lanes, then 2-digit quarters in 16-bit lanes, then digits in
        // bytes; each division by 100 or 10 is a multiplication that is exact in this range.
        let high = value / 10_000
        var lanes = high | ((value &- high &* 10_000) << 32)
        let hundreds = ((lanes &* 10486) >> 20) & 0x0000_007F_0000_007F
        lanes = hundreds | ((lanes &- hundreds &* 100) << 16)
        let tens = ((lanes &* 103) >> 10) & 0x000F_000F_000F_000F
        lanes = tens | ((lanes &- tens &* 10) << 8)
        return lanes | 0x3030_3030_3030_3030
    }

    @inline(__always)
    private static func store(_ word: UInt64, at pointer: UnsafeMutablePointer<UInt8>) {
        UnsafeMutableRawPointer(pointer).storeBytes(of: word, as: UInt64.self)
    }

    @inline(__always)
    private static func load(_ pointer: UnsafePointer<UInt8>) -> UInt64 {
        UnsafeRawPointer(pointer).loadUnaligned(as: UInt64.self)
    }

    /// Copies 24 bytes (at least `count` ≤ 24 are meaningful) with three 8-byte moves.
    @inline(__always)
    private static func copy24(from source: UnsafePointer<UInt8>, to destination: UnsafeMutablePointer<UInt8>) {
        let a = load(source)
        let b = load(source + 8)
        let c = load(source + 16)
        store(a, at: destination)
        store(b, at: destination + 8)
        store(c, at: destination + 16)
    }

    /// Writes `m · 10^exponent` for the fast path's 9- or 10-digit `m` (10⁸ ≤ m ≤ 2 · 10⁹).
    @inline(__always)
    private static func writeShort(_ m: UInt64, exponent: Int, to out: UnsafeMutablePointer<UInt8>) -> Int {
        // The digits right-aligned in bytes 14…23 of the scratch: m = high · 10⁸ + low, high in 1…20.
        let high = m / 100_000_000
        let tens = (high &* 103) &>> 10
        let ones = high &- tens &* 10
        var scratch = Scratch()
        scratch.words.1 = (0x30 &+ ones) << 56 | (0x30 &+ tens) << 48 | 0x3030_3030_3030
        scratch.words.2 = eightDigits(m &- high &* 100_000_000)
        let lowZeros = (scratch.words.2 ^ Scratch.zeros).leadingZeroBitCount &>> 3
        let trailingZeros = lowZeros == 8 ? (ones == 0 ? 9 : 8) : lowZeros
        let allDigits = m >= 1_000_000_000 ? 10 : 9
        return withUnsafeMutableBytes(of: &scratch.words) { raw in
            let first = UnsafePointer(raw.baseAddress!.assumingMemoryBound(to: UInt8.self) + (24 &- allDigits))
            return emit(first, count: allDigits &- trailingZeros, point: allDigits &+ exponent, to: out)
        }
    }

    /// Writes `digits · 10^exponent` (0 < `digits` < 10¹⁷; trailing zeros are dropped) in the layout
    /// described on the type, and returns the text's length.
    @inline(__always)
    static func layout(digits: UInt64, exponent: Int, to out: UnsafeMutablePointer<UInt8>) -> Int {
        // Eight or more trailing zeros: drop them first, so that fewer digits need converting.
        let quotient = digits / 100_000_000
        let dropEight = digits &- quotient &* 100_000_000 == 0
        let value = dropEight ? quotient : digits
        let exponent = dropEight ? exponent &+ 8 : exponent

        // The digits of `value`, right-aligned in bytes 7…23 of the scratch (zero-padded), 8 at a time; the
        // rest of the 48 bytes is room for the 24-byte copies in `emit`.
        var scratch = Scratch()
        let high = value / 100_000_000  // < 10⁹
        scratch.words.2 = eightDigits(value &- high &* 100_000_000)
        if high < 10 {
            scratch.words.1 = (0x30 &+ high) << 56 | 0x0030_3030_3030_3030
        } else {
            let top = high / 100_000_000  // one digit
            scratch.words.1 = eightDigits(high &- top &* 100_000_000)
            scratch.words.0 = (0x30 &+ top) << 56 | 0x0030_3030_3030_3030
        }
        // Trailing "0" characters: the most significant zero bytes of (word XOR "00000000").
        var trailingZeros = (scratch.words.2 ^ Scratch.zeros).leadingZeroBitCount &>> 3
        if trailingZeros == 8 {
            trailingZeros &+= (scratch.words.1 ^ Scratch.zeros).leadingZeroBitCount &>> 3
            if trailingZeros == 16 { trailingZeros &+= (scratch.words.0 ^ Scratch.zeros).leadingZeroBitCount &>> 3 }
        }
        // The number of digits: 1 + ⌊log₁₀ value⌋, from the bit length and one comparison.
        let bitLength = 64 &- value.leadingZeroBitCount
        var allDigits = (bitLength &* 1233) &>> 12
        allDigits &+= integerPowersOfTen.withUnsafeBufferPointer { value >= $0[allDigits] ? 1 : 0 }
        return withUnsafeMutableBytes(of: &scratch.words) { raw in
            let first = UnsafePointer(raw.baseAddress!.assumingMemoryBound(to: UInt8.self) + (24 &- allDigits))
            let count = allDigits &- trailingZeros
            return emit(first, count: count, point: count &+ exponent &+ trailingZeros, to: out)
        }
    }

    /// Room for the digits of one number: they end at byte 24, and are preceded and followed by "0"
    /// characters, so that leading and trailing zeros can be copied along with them.
    struct Scratch {
        /// "00000000".
        static let zeros: UInt64 = 0x3030_3030_3030_3030
        /// Bytes 0…23 for the digits (right-aligned), 24…71 "0" characters.
        var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
            (zeros, zeros, zeros, zeros, zeros, zeros, zeros, zeros, zeros)
    }

    /// Writes the `count` digits at `first` (inside a ``Scratch``, at least 6 bytes from its start) as
    /// `0.digits · 10^point` in the layout described on the type, and returns the text's length. Writes up to
    /// 47 bytes.
    @inline(__always)
    private static func emit(
        _ first: UnsafePointer<UInt8>, count: Int, point: Int, to out: UnsafeMutablePointer<UInt8>
    ) -> Int {
        if point > -6 && point <= 21 {
            // One branch-free form for "123.45", "0.00123" and "12300": take the "0"s before the digits for
            // point ≤ 0 (0.00123 is 000123 with a point after one digit), and the "0"s after them for an
            // integer; write a point in any case, and count it only when there are digits after it.
            let leadingZeros = point > 0 ? 0 : 1 &- point
            let start = first - leadingZeros
            let integerDigits = point &+ leadingZeros
            copy24(from: start, to: out)
            copy24(from: start + integerDigits, to: out + (integerDigits &+ 1))
            out[integerDigits] = UInt8(ascii: ".")
            return count <= point ? point : count &+ leadingZeros &+ 1
        }
        // Exponent form.
        out[0] = first[0]
        var length = 1
        if count > 1 {
            out[1] = UInt8(ascii: ".")
            copy24(from: first + 1, to: out + 2)
            length = count + 1
        }
        let power = point - 1
        let magnitude = power < 0 ? -power : power
        out[length] = UInt8(ascii: "e")
        out[length + 1] = power < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+")
        length += 2
        if magnitude >= 100 {
            out[length] = UInt8(truncatingIfNeeded: 48 + magnitude / 100)
            length += 1
        }
        if magnitude >= 10 {
            out[length] = UInt8(truncatingIfNeeded: 48 + magnitude / 10 % 10)
            length += 1
        }
        out[length] = UInt8(truncatingIfNeeded: 48 + magnitude % 10)
        return length + 1
    }
}

/// 126-bit approximations of the powers of ten `10^-k` for `k` in −324…292, as Schubfach needs them:
/// `g(k) = ⌊10^-k · 2^-r⌋ + 1` with `r = ⌊log₂ 10^-k⌋ − 125` (so `2^125 ≤ g < 2^126`), split into
/// `g1 = g >> 63` and `g0 = g mod 2^63`.
///
/// The table is computed once, exactly, with a small big-integer routine, and never freed; ``shared``
/// hands out its address so hot loops need no lazy-initialisation check.
struct PowersOfTen: @unchecked Sendable {
    /// The smallest `k` in the table.
    static let minimumK = -324
    /// The largest `k` in the table.
    static let maximumK = 292

    private let table: UnsafePointer<UInt64>

    /// The table, computed on first use.
    static let shared = PowersOfTen()

    private init() {
        let count = PowersOfTen.maximumK - PowersOfTen.minimumK + 1
        let table = UnsafeMutablePointer<UInt64>.allocate(capacity: 2 * count)
        func store(_ g: (high: UInt64, low: UInt64), k: Int) {
            // g + 1, then split at bit 63.
            let (low, carry) = g.low.addingReportingOverflow(1)
            let high = g.high &+ (carry ? 1 : 0)
            let index = 2 * (k - PowersOfTen.minimumK)
            table[index] = high << 1 | low >> 63
            table[index + 1] = low & (1 << 63 - 1)
        }
        // k ≤ 0: 10^-k is an integer; scale it to 126 bits (shifting right floors).
        var power = BigNumber(1)
        for e in 0...(-PowersOfTen.minimumK) {
            let shift = 125 - DecimalFormatter.floorLog2Pow10(e)
            store((shift >= 0 ? power.shiftedLeft(by: shift) : power.shiftedRight(by: -shift)).low128, k: -e)
            power.multiply(by: 10)
        }
        // k > 0: ⌊2^(-r) / 10^k⌋ = ⌊⌊2^m / 10^k⌋ / 2^(m + r)⌋, dividing 2^m by 10 once per step.
        let m = 1200
        var quotient = BigNumber(1).shiftedLeft(by: m)
        for k in 1...PowersOfTen.maximumK {
            quotient.divide(by: 10)
            let shift = 125 - DecimalFormatter.floorLog2Pow10(-k)
            store(quotient.shiftedRight(by: m - shift).low128, k: k)
        }
        self.table = UnsafePointer(table)
    }

    /// `(g1, g0)` for `k` in ``minimumK``…``maximumK``.
    @inline(__always)
    subscript(k: Int) -> (UInt64, UInt64) {
        let index = 2 &* (k &- PowersOfTen.minimumK)
        return (table[index], table[index &+ 1])
    }
}

/// A non-negative integer of any size, just enough to build ``PowersOfTen``: 32-bit limbs, least significant
/// first.
struct BigNumber {
    private(set) var limbs: [UInt32]

    init(_ value: UInt32) { limbs = [value] }

    private init(limbs: [UInt32]) { self.limbs = limbs }

    mutating func multiply(by factor: UInt32) {
        var carry: UInt64 = 0
        for index in limbs.indices {
            let product = UInt64(limbs[index]) * UInt64(factor) + carry
            limbs[index] = UInt32(truncatingIfNeeded: product)
            carry = product >> 32
        }
        if carry > 0 { limbs.append(UInt32(carry)) }
    }

    /// Divides, rounding down.
    mutating func divide(by divisor: UInt32) {
        var remainder: UInt64 = 0
        for index in limbs.indices.reversed() {
            let current = remainder << 32 | UInt64(limbs[index])
            limbs[index] = UInt32(current / UInt64(divisor))
            remainder = current % UInt64(divisor)
        }
        while limbs.count > 1, limbs.last == 0 { limbs.removeLast() }
    }

    func shiftedLeft(by bits: Int) -> BigNumber {
        let whole = bits / 32
        let part = bits % 32
        var result = [UInt32](repeating: 0, count: whole) + limbs + [0]
        if part > 0 {
            for index in (whole..<result.count).reversed() {
                let lower = index > whole ? result[index - 1] >> (32 - part) : 0
                result[index] = result[index] << part | lower
            }
        }
        while result.count > 1, result.last == 0 { result.removeLast() }
        return BigNumber(limbs: result)
    }

    /// Shifts right, rounding down.
    func shiftedRight(by bits: Int) -> BigNumber {
        let whole = bits / 32
        let part = bits % 32
        guard whole < limbs.count else { return BigNumber(0) }
        var result = Array(limbs[whole...])
        if part > 0 {
            for index in result.indices {
                let upper = index + 1 < result.count ? result[index + 1] << (32 - part) : 0
                result[index] = result[index] >> part | upper
            }
        }
        while result.count > 1, result.last == 0 { result.removeLast() }
        return BigNumber(limbs: result)
    }

    /// The lowest 128 bits.
    var low128: (high: UInt64, low: UInt64) {
        func limb(_ index: Int) -> UInt64 { index < limbs.count ? UInt64(limbs[index]) : 0 }
        return (limb(3) << 32 | limb(2), limb(1) << 32 | limb(0))
    }
}
