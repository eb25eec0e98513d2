// libFuzzer entry point for the decimal parser, built by Fuzz/run.sh (target `number`).
//
// Whenever the parser accepts an input, the result must equal `Double(String)` bit for bit; whenever the input
// is in the trace number syntax and `Double(String)` gives a finite value, the parser must accept it.

#if canImport(Glibc)
    import Glibc
#endif

/// `true` when `bytes` is `[+-]digits[.digits][(e|E)[+-]digits]`.
private func matchesSyntax(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    var i = 0
    func digits() -> Int {
        let start = i
        while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
        return i - start
    }
    if i < bytes.count, bytes[i] == 0x2B || bytes[i] == 0x2D { i += 1 }
    if digits() == 0 { return false }
    if i < bytes.count, bytes[i] == 0x2E {
        i += 1
        if digits() == 0 { return false }
    }
    if i < bytes.count, bytes[i] == 0x65 || bytes[i] == 0x45 {
        i += 1
        if i < bytes.count, bytes[i] == 0x2B || bytes[i] == 0x2D { i += 1 }
        if digits() == 0 { return false }
    }
    return i == bytes.count
}

@_cdecl("LLVMFuzzerTestOneInput")
public func numberParserFuzzTest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    // Commas end a field; the whole-input parser rejects them.
    let ours = DecimalParser.parse(bytes)
    let text = String(decoding: bytes, as: UTF8.self)
    let reference = Double(text)
    if let ours {
        guard let reference, ours.bitPattern == reference.bitPattern else {
            print("mismatch for \(text): ours \(ours), Double(String) \(String(describing: reference))")
            abort()
        }
    } else if matchesSyntax(bytes), let reference, reference.isFinite {
        print("rejected valid number \(text) (Double(String) gives \(reference))")
        abort()
    }
    return 0
}
