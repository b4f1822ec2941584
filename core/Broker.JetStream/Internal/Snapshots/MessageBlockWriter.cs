using System.Buffers;
using System.Buffers.Binary;
using System.Globalization;

namespace Broker.JetStream.Internal.Snapshots;

/// <summary>
/// Builds one message block of nats-server 2.9's file store, <c>msgs/&lt;n&gt;.blk</c> with its index
/// <c>msgs/&lt;n&gt;.idx</c> (filestore.go <c>writeMsgRecord</c>, <c>writeIndexInfo</c>). A record is
/// <c>total_len(4) seq(8) ts(8) subj_len(2) subj [hdr_len(4) hdr] msg hash(8)</c>, little-endian, the high bit of the
/// length set when there are headers, the hash the HighwayHash-64 of seq, ts, subject, headers and payload keyed by
/// <c>sha256("&lt;stream&gt;-&lt;n&gt;")</c>. 2.9 finds a record by its distance from the block's first sequence, so
/// every sequence of the block has a record: a deleted one an empty record whose sequence has the erase bit.
/// </summary>
internal sealed class MessageBlockWriter
{
    public const int RecordHeaderSize = 22;
    public const ulong EraseBit = 1UL << 63;
    public const uint HeadersBit = 1U << 31;
    public const byte Magic = 22;

    private readonly ArrayBufferWriter<byte> records = new(64 * 1024);
    private readonly List<ulong> deleted = [];
    private readonly HighwayHash64 hash;
    private ulong messages;
    private ulong bytes;
    private ulong firstSequence;
    private long firstTimestamp;
    private ulong lastSequence;
    private long lastTimestamp;
    private ulong lastChecksum;

    public MessageBlockWriter(string stream, int index)
    {
        Index = index;
        hash = HighwayHash64.KeyedBy(stream + "-" + index.ToString(CultureInfo.InvariantCulture));
    }

    public int Index { get; }

    /// <summary>The block's size so far.</summary>
    public int Size => records.WrittenCount;

    /// <summary>The last sequence with a record, 0 when none.</summary>
    public ulong LastSequence => lastSequence;

    /// <summary>Appends a message.</summary>
    public void Append(ulong sequence, long timestamp, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
    {
        var length = RecordHeaderSize + subject.Length + (headers.IsEmpty ? 0 : 4 + headers.Length) + payload.Length + 8;
        var span = records.GetSpan(length)[..length];
        WriteHeader(span, (uint)length | (headers.IsEmpty ? 0 : HeadersBit), sequence, timestamp, subject.Length);
        var at = RecordHeaderSize;
        subject.CopyTo(span[at..]);
        at += subject.Length;
        if (!headers.IsEmpty)
        {
            BinaryPrimitives.WriteUInt32LittleEndian(span[at..], (uint)headers.Length);
            at += 4;
            headers.CopyTo(span[at..]);
            at += headers.Length;
        }

        payload.CopyTo(span[at..]);
        at += payload.Length;
        hash.Reset();
        hash.Append(span[4..20]);
        hash.Append(subject);
        hash.Append(headers);
        hash.Append(payload);
        lastChecksum = hash.Finish();
        BinaryPrimitives.WriteUInt64LittleEndian(span[at..], lastChecksum);
        records.Advance(length);

        if (messages == 0)
        {
            firstSequence = sequence;
            firstTimestamp = timestamp;
        }

        messages++;
        bytes += (ulong)length;
        lastSequence = sequence;
        lastTimestamp = timestamp;
    }

    /// <summary>Appends the empty record of a deleted sequence.</summary>
    public void AppendDeleted(ulong sequence, long timestamp)
    {
        const int length = RecordHeaderSize + 8;
        var span = records.GetSpan(length)[..length];
        WriteHeader(span, length, sequence | EraseBit, timestamp, 0);
        lastChecksum = hash.Compute(span[4..20]);
        BinaryPrimitives.WriteUInt64LittleEndian(span[RecordHeaderSize..], lastChecksum);
        records.Advance(length);
        if (messages > 0)
        {
            // Deletes before the block's first message are below its first sequence; those after are its delete map.
            deleted.Add(sequence);
        }

        lastSequence = sequence;
        lastTimestamp = timestamp;
    }

    /// <summary>The <c>.blk</c> file.</summary>
    public ReadOnlyMemory<byte> Block => records.WrittenMemory;

    /// <summary>The <c>.idx</c> file: magic, version 1, then msgs, bytes, first, last, the delete map's size, the last checksum and the delete map.</summary>
    public byte[] IndexFile()
    {
        var buffer = new ArrayBufferWriter<byte>(64 + (deleted.Count * 10));
        buffer.Write<byte>([Magic, 1]);
        Varint.WriteUnsigned(buffer, messages);
        Varint.WriteUnsigned(buffer, bytes);
        // An empty block's first sequence is one past its last, as nats-server's.
        var first = messages == 0 ? lastSequence + 1 : firstSequence;
        Varint.WriteUnsigned(buffer, first);
        Varint.WriteSigned(buffer, messages == 0 ? 0 : firstTimestamp);
        Varint.WriteUnsigned(buffer, lastSequence);
        Varint.WriteSigned(buffer, lastTimestamp);
        Varint.WriteUnsigned(buffer, (ulong)deleted.Count);
        BinaryPrimitives.WriteUInt64LittleEndian(buffer.GetSpan(8), lastChecksum);
        buffer.Advance(8);
        foreach (var sequence in deleted)
        {
            Varint.WriteUnsigned(buffer, sequence - first);
        }

        return buffer.WrittenSpan.ToArray();
    }

    private static void WriteHeader(Span<byte> span, uint length, ulong sequence, long timestamp, int subjectLength)
    {
        BinaryPrimitives.WriteUInt32LittleEndian(span, length);
        BinaryPrimitives.WriteUInt64LittleEndian(span[4..], sequence);
        BinaryPrimitives.WriteInt64LittleEndian(span[12..], timestamp);
        BinaryPrimitives.WriteUInt16LittleEndian(span[20..], (ushort)subjectLength);
    }
}

/// <summary>Go's <c>encoding/binary</c> varints (unsigned, and zig-zag signed), which nats-server's index and consumer state files use.</summary>
internal static class Varint
{
    public static void WriteUnsigned(IBufferWriter<byte> buffer, ulong value)
    {
        var span = buffer.GetSpan(10);
        var n = 0;
        while (value >= 0x80)
        {
            span[n++] = (byte)(value | 0x80);
            value >>= 7;
        }

        span[n++] = (byte)value;
        buffer.Advance(n);
    }

    public static void WriteSigned(IBufferWriter<byte> buffer, long value) =>
        WriteUnsigned(buffer, (ulong)(value << 1) ^ (ulong)(value >> 63));

    /// <summary>Reads an unsigned varint at <paramref name="at"/>; false when the data ends first.</summary>
    public static bool TryReadUnsigned(ReadOnlySpan<byte> data, ref int at, out ulong value)
    {
        value = 0;
        for (var shift = 0; shift < 70 && at < data.Length; shift += 7)
        {
            var b = data[at++];
            value |= (ulong)(b & 0x7f) << shift;
            if (b < 0x80)
            {
                return true;
            }
        }

        return false;
    }

    public static bool TryReadSigned(ReadOnlySpan<byte> data, ref int at, out long value)
    {
        var ok = TryReadUnsigned(data, ref at, out var raw);
        value = (long)(raw >> 1) ^ -(long)(raw & 1);
        return ok;
    }
}
