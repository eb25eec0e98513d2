// swift-tools-version: 6.1
// Benchmarks for swift-motion, with ordo-one/package-benchmark. Run from this folder:
//   swift package --disable-sandbox benchmark
// Figures and how to read them: ../Docs/Performance.md.

import PackageDescription

/// A benchmark executable in `Benchmarks/<name>`, using swift-motion's `modules` (Swift 6 mode).
func benchmark(_ name: String, using modules: [String]) -> Target {
    .executableTarget(
        name: name,
        dependencies: [.product(name: "Benchmark", package: "package-benchmark")]
            + modules.map { .product(name: $0, package: "swift-motion") },
        path: "Benchmarks/\(name)",
        swiftSettings: [.swiftLanguageMode(.v6)],
        plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
    )
}

let package = Package(
    name: "swift-motion-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "swift-motion", path: ".."),
        .package(url: "https://github.com/ordo-one/package-benchmark", from: "1.38.0", traits: ["MallocInterposer"]),
    ],
    targets: [
        benchmark("AlgorithmBenchmarks", using: ["MotionAlgorithms", "MotionCore"]),
        benchmark("FusionBenchmarks", using: ["MotionAlgorithms", "MotionCore", "MotionTesting", "MotionTrace"]),
        benchmark("TraceBenchmarks", using: ["MotionTrace", "MotionCore", "MotionTesting"]),
        benchmark("EventBenchmarks", using: ["MotionAlgorithms", "MotionCore"]),
        benchmark("MotionManagerBenchmarks", using: ["Motion", "MotionCore"]),
        benchmark("ProcessorBenchmarks", using: ["Motion", "MotionCore", "MotionTesting"]),
        benchmark("StoreBenchmarks", using: ["MotionStore", "MotionCore", "MotionTesting"]),
    ]
)
