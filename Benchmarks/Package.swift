// swift-tools-version: 6.1
// Benchmarks for swift-motion, with ordo-one/package-benchmark. Run from this folder:
//   swift package --disable-sandbox benchmark
// Figures and how to read them: ../Docs/Performance.md.

import PackageDescription

let package = Package(
    name: "swift-motion-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "swift-motion", path: ".."),
        .package(url: "https://github.com/ordo-one/package-benchmark", from: "1.38.0", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "AlgorithmBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "MotionAlgorithms", package: "swift-motion"),
                .product(name: "MotionCore", package: "swift-motion"),
            ],
            path: "Benchmarks/AlgorithmBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        .executableTarget(
            name: "FusionBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "MotionAlgorithms", package: "swift-motion"),
                .product(name: "MotionCore", package: "swift-motion"),
                .product(name: "MotionTesting", package: "swift-motion"),
            ],
            path: "Benchmarks/FusionBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        .executableTarget(
            name: "TraceBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "MotionTrace", package: "swift-motion"),
                .product(name: "MotionCore", package: "swift-motion"),
                .product(name: "MotionTesting", package: "swift-motion"),
            ],
            path: "Benchmarks/TraceBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        .executableTarget(
            name: "EventBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "MotionAlgorithms", package: "swift-motion"),
                .product(name: "MotionCore", package: "swift-motion"),
            ],
            path: "Benchmarks/EventBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        .executableTarget(
            name: "MotionManagerBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "Motion", package: "swift-motion"),
                .product(name: "MotionCore", package: "swift-motion"),
            ],
            path: "Benchmarks/MotionManagerBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
    ]
)
