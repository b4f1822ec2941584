using System.Buffers.Binary;
using System.Security.Cryptography;
using System.Text;

namespace Broker.JetStream.Internal.Snapshots;

/// <summary>
/// HighwayHash-64 (Alakuijala, Cox, Wassenberg: "Fast keyed hash/pseudo-random function using SIMD multiply and
/// permute", the portable reference algorithm), written from the published description. nats-server's file store
/// checksums every message record with it, keyed by <c>sha256("&lt;stream&gt;-&lt;block index&gt;")</c>, and its
/// <c>meta.sum</c> files with <c>sha256(&lt;stream&gt;)</c> or <c>sha256("&lt;stream&gt;/&lt;consumer&gt;")</c>; a snapshot
/// in its format carries them, so a restore there verifies what we write.
/// </summary>
/// <remarks>Incremental: <see cref="Reset"/>, any number of <see cref="Append"/>, then <see cref="Finish"/>.</remarks>
internal sealed class HighwayHash64
{
    private static readonly ulong[] Init0 = [0xdbe6d5d5fe4cce2f, 0xa4093822299f31d0, 0x13198a2e03707344, 0x243f6a8885a308d3];
    private static readonly ulong[] Init1 = [0x3bd39e10cb0ef593, 0xc0acf169b5f18a8c, 0xbe5466cf34e90c6c, 0x452821e638d01377];

    private readonly ulong[] key = new ulong[4];
    private readonly ulong[] v0 = new ulong[4];
    private readonly ulong[] v1 = new ulong[4];
    private readonly ulong[] mul0 = new ulong[4];
    private readonly ulong[] mul1 = new ulong[4];
    private readonly byte[] pending = new byte[32];
    private int pendingLength;

    /// <param name="key">The 32-byte key (four little-endian 64-bit lanes).</param>
    public HighwayHash64(ReadOnlySpan<byte> key)
    {
        if (key.Length != 32)
        {
            throw new ArgumentException("HighwayHash needs a 32-byte key.", nameof(key));
        }

        for (var i = 0; i < 4; i++)
        {
            this.key[i] = BinaryPrimitives.ReadUInt64LittleEndian(key[(8 * i)..]);
        }

        Reset();
    }

    /// <summary>A hash keyed as nats-server keys its: the SHA-256 of <paramref name="keyText"/>.</summary>
    public static HighwayHash64 KeyedBy(string keyText) => new(SHA256.HashData(Encoding.UTF8.GetBytes(keyText)));

    /// <summary>The hash of <paramref name="data"/> under this key, as the 8 bytes nats-server writes (little-endian).</summary>
    public ulong Compute(ReadOnlySpan<byte> data)
    {
        Reset();
        Append(data);
        return Finish();
    }

    public void Reset()
    {
        for (var i = 0; i < 4; i++)
        {
            mul0[i] = Init0[i];
            mul1[i] = Init1[i];
            v0[i] = mul0[i] ^ key[i];
            v1[i] = mul1[i] ^ ((key[i] >> 32) | (key[i] << 32));
        }

        pendingLength = 0;
    }

    public void Append(ReadOnlySpan<byte> data)
    {
        if (pendingLength > 0)
        {
            var take = Math.Min(32 - pendingLength, data.Length);
            data[..take].CopyTo(pending.AsSpan(pendingLength));
            pendingLength += take;
            data = data[take..];
            if (pendingLength < 32)
            {
                return;
            }

            UpdatePacket(pending);
            pendingLength = 0;
        }

        while (data.Length >= 32)
        {
            UpdatePacket(data[..32]);
            data = data[32..];
        }

        data.CopyTo(pending);
        pendingLength = data.Length;
    }

    public ulong Finish()
    {
        if (pendingLength > 0)
        {
            UpdateRemainder(pending.AsSpan(0, pendingLength));
            pendingLength = 0;
        }

        Span<ulong> permuted = stackalloc ulong[4];
        for (var round = 0; round < 4; round++)
        {
            permuted[0] = Rotate32(v0[2]);
            permuted[1] = Rotate32(v0[3]);
            permuted[2] = Rotate32(v0[0]);
            permuted[3] = Rotate32(v0[1]);
            Update(permuted);
        }

        return v0[0] + v1[0] + mul0[0] + mul1[0];
    }

    private static ulong Rotate32(ulong value) => (value >> 32) | (value << 32);

    private void UpdatePacket(ReadOnlySpan<byte> packet)
    {
        Span<ulong> lanes = stackalloc ulong[4];
        for (var i = 0; i < 4; i++)
        {
            lanes[i] = BinaryPrimitives.ReadUInt64LittleEndian(packet[(8 * i)..]);
        }

        Update(lanes);
    }

    private void UpdateRemainder(ReadOnlySpan<byte> bytes)
    {
        var size = bytes.Length;
        var sizeMod4 = size & 3;
        var remainder = size & ~3;
        for (var i = 0; i < 4; i++)
        {
            v0[i] += ((ulong)size << 32) + (ulong)size;
        }

        for (var i = 0; i < 4; i++)
        {
            // Each 32-bit half of v1 rotates left by the remainder's size.
            var low = (uint)v1[i];
            var high = (uint)(v1[i] >> 32);
            low = (low << size) | (low >> (32 - size));
            high = (high << size) | (high >> (32 - size));
            v1[i] = ((ulong)high << 32) | low;
        }

        Span<byte> packet = stackalloc byte[32];
        packet.Clear();
        bytes[..remainder].CopyTo(packet);
        if ((size & 16) != 0)
        {
            for (var i = 0; i < 4; i++)
            {
                packet[28 + i] = bytes[remainder + i + sizeMod4 - 4];
            }
        }
        else if (sizeMod4 != 0)
        {
            packet[16] = bytes[remainder];
            packet[17] = bytes[remainder + (sizeMod4 >> 1)];
            packet[18] = bytes[remainder + sizeMod4 - 1];
        }

        UpdatePacket(packet);
    }

    private void Update(ReadOnlySpan<ulong> lanes)
    {
        for (var i = 0; i < 4; i++)
        {
            v1[i] += mul0[i] + lanes[i];
            mul0[i] ^= (v1[i] & 0xffffffff) * (v0[i] >> 32);
            v0[i] += mul1[i];
            mul1[i] ^= (v0[i] & 0xffffffff) * (v1[i] >> 32);
        }

        ZipperMergeAndAdd(v1[1], v1[0], ref v0[1], ref v0[0]);
        ZipperMergeAndAdd(v1[3], v1[2], ref v0[3], ref v0[2]);
        ZipperMergeAndAdd(v0[1], v0[0], ref v1[1], ref v1[0]);
        ZipperMergeAndAdd(v0[3], v0[2], ref v1[3], ref v1[2]);
    }

    private static void ZipperMergeAndAdd(ulong v1, ulong v0, ref ulong add1, ref ulong add0)
    {
        add0 += (((v0 & 0xff000000) | (v1 & 0xff00000000)) >> 24) |
                (((v0 & 0xff0000000000) | (v1 & 0xff000000000000)) >> 16) |
                (v0 & 0xff0000) | ((v0 & 0xff00) << 32) |
                ((v1 & 0xff00000000000000) >> 8) | (v0 << 56);
        add1 += (((v1 & 0xff000000) | (v0 & 0xff00000000)) >> 24) |
                (v1 & 0xff0000) | ((v1 & 0xff0000000000) >> 16) |
                ((v1 & 0xff00) << 24) | ((v0 & 0xff000000000000) >> 8) |
                ((v1 & 0xff) << 48) | (v0 & 0xff00000000000000);
    }
}
