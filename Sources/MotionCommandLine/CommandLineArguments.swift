/// The argument conventions `motionctl` and `motiond` share.
package enum CommandLineArguments {
    /// `--speed -1` becomes `--speed=-1`: the argument parser would take `-1` for an option and report a missing
    /// value, where the option's own check names its allowed range. A word after a `--option` that starts like a
    /// negative number (`-1`, `-.5`, `-1, 0, 0; …`) is its value; everything else, and all after `--`, is left as
    /// it is.
    package static func joiningNegativeValues(_ arguments: [String]) -> [String] {
        var result: [String] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let word = arguments[index]
            let next = index + 1 < arguments.endIndex ? arguments[index + 1] : nil
            if word == "--" {
                result += arguments[index...]
                break
            }
            if word.hasPrefix("--"), !word.contains("="), let next, looksLikeNegativeNumber(next) {
                result.append("\(word)=\(next)")
                index += 2
            } else {
                result.append(word)
                index += 1
            }
        }
        return result
    }

    /// `-` followed by a digit, or by `.` and a digit.
    static func looksLikeNegativeNumber(_ word: String) -> Bool {
        let rest = word.utf8.dropFirst()
        guard word.utf8.first == UInt8(ascii: "-"), let first = rest.first else { return false }
        let isDigit = { (byte: UInt8) in byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        return isDigit(first) || (first == UInt8(ascii: ".") && rest.dropFirst().first.map(isDigit) == true)
    }
}
