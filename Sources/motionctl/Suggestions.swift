import ArgumentParser

/// "Did you mean": an unknown command or option is named with the closest valid one (edit distance), before the
/// argument parser would answer with a check that hides it (`--trac FILE` used to give "Give an input: --trace
/// FILE, …"). motiond's parser suggests on its own: it has one command, and no check of its own answers first.
enum Suggestions {
    /// The options of `command` (long and short, with whether each takes a value), read from its full help: what
    /// the user can see, so nothing is suggested that the help does not show.
    static func options(of command: any ParsableCommand.Type) -> [String: Bool] {
        var options: [String: Bool] = ["--help": false, "-h": false]
        var inOptions = false
        for line in command.helpMessage(includeHidden: true, columns: 10_000).split(separator: "\n") {
            if !line.hasPrefix(" ") {
                inOptions = line.hasSuffix(":") && line.uppercased() == line
                continue
            }
            guard inOptions, case let text = line.drop(while: { $0 == " " }), text.hasPrefix("-") else { continue }
            // `--trace <file>   The trace…`, `-h, --help   Show…`, `--[no-]low-latency   …`
            let definition = beforeTwoSpaces(text)
            let takesValue = definition.contains("<")
            for word in definition.split(separator: ",") {
                let name = word.split(separator: " ").first.map(String.init) ?? ""
                if name.hasPrefix("--[no-]") {
                    options["--" + name.dropFirst(7)] = takesValue
                    options["--no-" + name.dropFirst(7)] = takesValue
                } else if name.hasPrefix("-") {
                    options[name] = takesValue
                }
            }
        }
        return options
    }

    /// `text` up to its first two spaces in a row (where a help line's description starts).
    private static func beforeTwoSpaces(_ text: Substring) -> Substring {
        var previous: Character?
        for index in text.indices {
            if text[index] == " " && previous == " " { return text[..<text.index(before: index)] }
            previous = text[index]
        }
        return text
    }

    /// The first unknown option among `arguments` (those of `command`), with the closest valid one if any is close.
    static func unknownOption(in arguments: [String], of command: any ParsableCommand.Type) -> (String, String?)? {
        let valid = options(of: command)
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let word = arguments[index]
            index += 1
            if word == "--" { break }
            guard word.hasPrefix("-"), word != "-", !word.dropFirst().allSatisfy({ $0.isNumber || $0 == "." }) else {
                continue
            }
            let name = word.split(separator: "=", maxSplits: 1).first.map(String.init) ?? word
            if let takesValue = valid[name] {
                if takesValue && !word.contains("=") { index += 1 }  // its value, whatever it looks like
                continue
            }
            return (name, closest(to: name, among: valid.keys.filter { $0.hasPrefix("--") }))
        }
        return nil
    }

    /// The candidate nearest `word` by edit distance, when near enough to be a typo (at most 2 edits, or a third
    /// of the word): `--trac` → `--trace`. A short option `-t` is compared with the long names starting with `t`.
    static func closest(to word: String, among candidates: [String]) -> String? {
        let bare = word.drop { $0 == "-" }
        guard !bare.isEmpty else { return nil }
        let isShort = !word.hasPrefix("--") && bare.count == 1
        var best: (String, Int)?
        for candidate in candidates.sorted() {
            let name = candidate.drop { $0 == "-" }
            if isShort && name.first != bare.first { continue }
            let distance = editDistance(Array(bare.lowercased()), Array(name.lowercased()))
            if best == nil || distance < best!.1 { best = (candidate, distance) }
        }
        guard let best else { return nil }
        return isShort || best.1 <= max(2, bare.count / 3) ? best.0 : nil
    }

    /// Levenshtein distance.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// The message for an unknown word, in the argument parser's words: `Unknown option '--trac'. Did you mean
    /// '--trace'?`.
    static func message(kind: String, _ word: String, _ suggestion: String?) -> String {
        "Unknown \(kind) '\(word)'." + (suggestion.map { " Did you mean '\($0)'?" } ?? "")
    }
}
