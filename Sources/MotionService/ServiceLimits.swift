/// What one client, or one user, may hold of the service at once (`Docs/Service.md`, "Limits"). A request over a
/// limit is refused with `org.freedesktop.DBus.Error.LimitsExceeded` naming it; nobody else notices.
///
/// A client is one bus connection (its unique name); a user is a uid, over all their connections (the system bus
/// lets one uid have 256 connections). Root is held to the same stream limits: the limits protect the service's
/// descriptors and memory, not a right.
package struct ServiceLimits: Sendable, Hashable {
    /// Open streams per client.
    package var streamsPerClient = 16
    /// Open streams per user.
    package var streamsPerUser = 64
    /// Open streams in all: each holds one descriptor of the service's (`LimitNOFILE=`).
    package var streams = 1024
    /// History queries (`OpenHistory`) running at once per user, and in all: each holds a thread and a
    /// descriptor of the service's until its client has read the answer.
    package var historyQueriesPerUser = 2
    package var historyQueries = 8
    /// Records that one user's streams may buffer for slow readers, in all (each stream's `buffer` option, 1024 by
    /// default, counts in full): 65,536 records, about 10 MB.
    package var bufferedRecordsPerUser = 65536
    /// Claims (`Claim…` of net.hadess.SensorProxy, one per sensor and client) one user may hold: 16 clients
    /// claiming all four sensors.
    package var claimsPerUser = 64
    /// polkit checks waiting for an answer: per client, per user, and in all (the system bus lets a connection
    /// wait for 128 replies at once; this keeps room for everyone else's).
    package var pendingChecksPerClient = 4
    package var pendingChecksPerUser = 16
    package var pendingChecks = 64
    /// Calls that may wait on one pending polkit check (the same client asking the same thing again).
    package var callsPerPendingCheck = 4
    /// `Claim…` calls of one user that may wait for a sensor's first value, in all.
    package var waitingClaimsPerUser = 16
    /// Calls the service holds unanswered, in all (waiting for polkit or a first value): each keeps its message
    /// and up to 16 descriptors a caller may attach (the system bus's limit per message), so 128 hold at most
    /// 2,048 of the process's descriptors, beside its streams'.
    package var heldCalls = 128

    package init() {}

    /// Descriptors the service keeps for itself besides streams: the bus, devices, udev, the state file.
    package static let reservedDescriptors = 256
}
