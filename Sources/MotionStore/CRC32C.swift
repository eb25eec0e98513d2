/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum ext4, iSCSI and SCTP use: each frame of a
/// store carries the CRC-32C of its payload. Check value: `"123456789"` → `0xE3069283`.
package enum CRC32C {
    /// The table of the byte-at-a-time algorithm.
    private static let table: [UInt32] = (0..<256).map { byte in
        var crc = UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        return crc
    }

    /// The checksum of `bytes`.
    package static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        table.withUnsafeBufferPointer { table in
            for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        }
        return ~crc
    }

    /// The checksum of `bytes`.
    package static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        Array(bytes).withUnsafeBytes { checksum($0) }
    }
}
