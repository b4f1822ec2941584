using System.Buffers.Binary;
using System.Numerics;

namespace Broker.Storage.FileStore.Internal.Format;

/// <summary>
/// CRC-32C (Castagnoli), the checksum of LevelDB, RocksDB and ext4 metadata, computed with the CPU's crc32
/// instruction through <see cref="BitOperations.Crc32C(uint, ulong)"/> (SSE4.2, ARMv8): several GB/s, no tables.
/// </summary>
internal static class Crc32C
{
    public static uint Compute(ReadOnlySpan<byte> data) => Append(0, data);

    /// <summary>Continues a checksum over more bytes (<c>Append(Append(0, a), b) == Compute(a + b)</c>).</summary>
    public static uint Append(uint crc, ReadOnlySpan<byte> data)
    {
        crc = ~crc;
        while (data.Length >= 8)
        {
            crc = BitOperations.Crc32C(crc, BinaryPrimitives.ReadUInt64LittleEndian(data));
            data = data[8..];
        }

        foreach (var b in data)
        {
            crc = BitOperations.Crc32C(crc, b);
        }

        return ~crc;
    }
}
