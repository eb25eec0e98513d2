// swift-tools-version: 6.1
// swift-motion: Core Motion for Linux. See README.md and Docs/.

import PackageDescription

/// Settings every Swift target gets: Swift 6 language mode (strict concurrency) and explicit-Sendable checks.
let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// The umockdev testbeds of the tests (TestSupport/).
let testbed = Target.Dependency.product(name: "IIOTestbed", package: "TestSupport")
/// `.computeBound`: the long synchronous suites run off Swift's cooperative pool (TestSupport/).
let testThreads = Target.Dependency.product(name: "TestThreads", package: "TestSupport")
/// `ScratchFolder`: the tests' files, removed when the test process exits (TestSupport/).
let testFiles = Target.Dependency.product(name: "TestFiles", package: "TestSupport")

let package = Package(
    name: "swift-motion",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "MotionCore", targets: ["MotionCore"]),
        .library(name: "MotionAlgorithms", targets: ["MotionAlgorithms"]),
        .library(name: "MotionTrace", targets: ["MotionTrace"]),
        .library(name: "MotionIIO", targets: ["MotionIIO"]),
        .library(name: "MotionTesting", targets: ["MotionTesting"]),
        .library(name: "MotionClient", targets: ["MotionClient"]),
        .library(name: "MotionStore", targets: ["MotionStore"]),
        .library(name: "Motion", targets: ["Motion"]),
        .executable(name: "motionctl", targets: ["motionctl"]),
        .executable(name: "motiond", targets: ["motiond"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-numerics", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        // Test support only (umockdev testbeds): built by `swift test`, never by a plain `swift build`.
        .package(path: "TestSupport"),
    ],
    targets: [
        // C libraries, visible only inside MotionIIO (`internal import`).
        .systemLibrary(name: "CLibIIO", pkgConfig: "libiio", providers: [.apt(["libiio-dev"])]),
        .systemLibrary(name: "CLibUdev", pkgConfig: "libudev", providers: [.apt(["libudev-dev"])]),
        // sd-bus and sd-event (libsystemd), visible only inside MotionDBus.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        // libmosquitto (MQTT), visible only inside MotionMQTT.
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        // Linux headers the Glibc module lacks (epoll, eventfd), visible only inside MotionSystem.
        .systemLibrary(name: "CMotionSystem"),

        // C-free, Foundation-free value types: samples, units, attitude, errors.
        .target(name: "MotionCore", dependencies: [.product(name: "RealModule", package: "swift-numerics")]),
        // Pure, allocation-free state machines (filters, rate gates) that take time as input.
        .target(
            name: "MotionAlgorithms",
            dependencies: ["MotionCore", .product(name: "RealModule", package: "swift-numerics")]
        ),
        // The system layer under every source and sink (package only): the epoll reactor, source threads, clocks,
        // errno and the one EINTR loop.
        .target(name: "MotionSystem", dependencies: ["MotionCore", "CMotionSystem"]),
        // The canonical trace format: streaming CSV reader, CSV and JSON Lines writers, the trace source.
        .target(name: "MotionTrace", dependencies: ["MotionCore", "MotionSystem"]),
        // Motion kept on disk: a segmented, checksummed append-only log that any program can query (history).
        .target(name: "MotionStore", dependencies: ["MotionCore", "MotionSystem", "MotionTrace"]),
        // Publishing to an MQTT broker through libmosquitto, with a MessageSpool as the outbox (package only).
        .target(
            name: "MotionMQTT",
            dependencies: [
                "MotionCore", "MotionStore", "MotionSystem", "MotionTrace", "CMosquitto",
                .product(name: "DequeModule", package: "swift-collections"),
            ]),
        // Linux IIO devices through libiio and libudev, and the device source.
        .target(name: "MotionIIO", dependencies: ["MotionCore", "MotionSystem", "CLibIIO", "CLibUdev"]),
        // D-Bus through sd-bus: an event-loop thread, a connection, objects with their interfaces, signals, peers.
        .target(name: "MotionDBus", dependencies: ["MotionCore", "MotionSystem", "CSystemd"]),
        // The Motion1 D-Bus protocol's names, signatures and option keys: one definition for service and client.
        .target(name: "MotionProtocol", dependencies: ["MotionDBus"]),
        // The motion service's client: the service source (`MotionSource.service`).
        .target(
            name: "MotionClient",
            dependencies: ["MotionCore", "MotionSystem", "MotionDBus", "MotionProtocol", "MotionTrace"]
        ),
        // Deterministic, seeded synthetic motion (simulator) for tests, recordings and users' tests.
        .target(
            name: "MotionTesting",
            dependencies: ["MotionCore", .product(name: "RealModule", package: "swift-numerics")]
        ),
        // The runtime users embed: MotionManager's push, pull and async delivery over devices and recordings.
        .target(
            name: "Motion",
            dependencies: [
                "MotionCore", "MotionAlgorithms", "MotionStore", "MotionSystem", "MotionTrace",
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        // The motion service: net.hadess.SensorProxy on the system bus, served from one MotionManager.
        .target(
            name: "MotionService",
            dependencies: [
                "Motion", "MotionAlgorithms", "MotionCore", "MotionDBus", "MotionIIO", "MotionMQTT", "MotionProtocol",
                "MotionStore", "MotionSystem", "MotionTrace", .product(name: "DequeModule", package: "swift-collections"),
            ]),
        .executableTarget(
            name: "motiond",
            dependencies: [
                "MotionCore", "MotionIIO", "MotionMQTT", "MotionService", "MotionStore", "MotionCommandLine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // A trace-only MotionManager program: links no device or service backend (LinkageTests checks it).
        .executableTarget(name: "motion-trace-only", dependencies: ["Motion", "MotionTrace"], path: "Examples/TraceOnly"),
        // Many simulated devices publishing to one MQTT broker (Scripts/benchmark-publish.sh fleet; not installed).
        .executableTarget(
            name: "motion-publish-fleet",
            dependencies: [
                "MotionCore", "MotionMQTT", "MotionStore", "MotionSystem", "MotionTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/PublishFleet"
        ),
        // The command-line conventions motionctl and motiond share: negative values after an option.
        .target(name: "MotionCommandLine"),
        // Scoring harnesses for the event detectors on simulated labelled scenarios (motionctl … --evaluate).
        .target(name: "MotionEvaluation", dependencies: ["MotionCore", "MotionAlgorithms", "MotionTesting"]),
        .executableTarget(
            name: "motionctl",
            dependencies: [
                "MotionCore", "MotionAlgorithms", "MotionTrace", "MotionIIO", "MotionClient", "MotionSystem", "MotionTesting",
                "Motion", "MotionEvaluation", "MotionProtocol", "MotionStore", "MotionMQTT", "MotionCommandLine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        .testTarget(name: "MotionCoreTests", dependencies: ["MotionCore", testThreads]),
        .testTarget(
            name: "MotionAlgorithmsTests",
            dependencies: [
                "MotionAlgorithms", "MotionTesting", .product(name: "RealModule", package: "swift-numerics"), testThreads,
            ]
        ),
        .testTarget(
            name: "MotionTraceTests", dependencies: ["MotionTrace", "MotionSystem", "MotionTesting", testThreads, testFiles]),
        .testTarget(
            name: "MotionMQTTTests",
            dependencies: ["MotionMQTT", "MotionStore", "MotionCore", testbed, testThreads, testFiles]),
        .testTarget(
            name: "MotionStoreTests", dependencies: ["MotionStore", "MotionSystem", testbed, testThreads, testFiles]),
        .testTarget(name: "MotionIIOTests", dependencies: ["MotionIIO", testbed, testThreads, testFiles]),
        .testTarget(name: "MotionTestingTests", dependencies: ["MotionTesting", "MotionTrace", testThreads]),
        .testTarget(
            name: "MotionTests",
            dependencies: [
                "Motion", "MotionAlgorithms", "MotionIIO", "MotionStore", "MotionTesting", "MotionTrace", "motion-trace-only", testbed,
                testThreads, testFiles,
            ]
        ),
        .testTarget(
            name: "motiondTests",
            dependencies: [
                "motiond", "Motion", "MotionAlgorithms", "MotionClient", "MotionDBus", "MotionCore", "MotionStore", "MotionTesting",
                testbed,
                testThreads, testFiles,
            ]),
        .testTarget(
            name: "MotionEvaluationTests",
            dependencies: ["MotionEvaluation", "MotionAlgorithms", "MotionCore", "MotionTesting", testThreads]
        ),
        .testTarget(
            name: "motionctlTests",
            dependencies: [
                "motionctl", "Motion", "MotionAlgorithms", "MotionCore", "MotionIIO", "MotionStore", "MotionTrace",
                "MotionTesting", testbed,
                testThreads, testFiles,
            ]
        ),
    ]
)

for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + strictSettings
}
