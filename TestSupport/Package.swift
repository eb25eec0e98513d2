// swift-tools-version: 6.1
// swift-motion's test support: umockdev testbeds that emulate IIO devices in the test process, the test
// prerequisites (`.requires(…)`), the `.computeBound` trait and the tests' scratch folder. A package of its own,
// so that a plain `swift build` of swift-motion builds only the products and needs no umockdev: only `swift test`
// (or `swift build --build-tests`) builds these.

import PackageDescription

let package = Package(
    name: "swift-motion-test-support",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "IIOTestbed", targets: ["IIOTestbed"]),
        .library(name: "TestThreads", targets: ["TestThreads"]),
        .library(name: "TestFiles", targets: ["TestFiles"]),
    ],
    targets: [
        // umockdev's C API, visible only inside IIOTestbed (`internal import`).
        .systemLibrary(name: "CUMockdev", pkgConfig: "umockdev-1.0", providers: [.apt(["libumockdev-dev"])]),
        // Re-executes the test binary once with umockdev's preload library (Docs/Devices.md).
        .target(name: "UMockdevPreload", linkerSettings: [.linkedLibrary("dl")]),
        // The Swift testbed wrapper, emulated device descriptions, a scan encoder and the test prerequisites.
        .target(
            name: "IIOTestbed", dependencies: ["CUMockdev", "UMockdevPreload", "TestThreads", "TestFiles"],
            swiftSettings: [
                .swiftLanguageMode(.v6), .enableUpcomingFeature("InternalImportsByDefault"),
                .enableUpcomingFeature("MemberImportVisibility"),
            ]),
        // `.computeBound` and `BlockingCall`: long synchronous tests and blocking calls run on threads of their own,
        // off the threads Swift's tasks run on.
        .target(
            name: "TestThreads",
            swiftSettings: [
                .swiftLanguageMode(.v6), .enableUpcomingFeature("InternalImportsByDefault"),
                .enableUpcomingFeature("MemberImportVisibility"),
            ]),
        // `ScratchFolder`: the tests' files, in a folder of the test process's own that is removed when it exits.
        .target(
            name: "TestFiles",
            swiftSettings: [
                .swiftLanguageMode(.v6), .enableUpcomingFeature("InternalImportsByDefault"),
                .enableUpcomingFeature("MemberImportVisibility"),
            ]),
    ]
)
