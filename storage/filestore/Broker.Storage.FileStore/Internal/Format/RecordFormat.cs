using System.Buffers.Binary;

namespace Broker.Storage.FileStore.Internal.Format;

/// <summary>What a record in a block holds.</summary>
internal enum RecordKind : byte
{
    /// <summary>A stored message.</summary>
    Message,

    /// <summary>A message whose bytes were overwritten (secure erase): its sequence is gone, its space kept.</summary>
    Erased,

    /// <summary>A delete marker for the message with this sequence (possibly in an earlier block).</summary>
    Tombstone,

    /// <summary>Every message below this sequence is removed (limits, purge, compact): one record instead of a tombstone each.</summary>
    Head,

    /// <summary>Every message above this sequence is removed and it becomes the last sequence (truncate).</summary>
    Truncate,

    /// <summary>
    /// The message with this sequence has a time to live: the timestamp field holds when it expires
    /// (<see cref="long.MaxValue"/>: never). Written just before the message, in the same block.
    /// </summary>
    Ttl,
}

/// <summary>The decoded fixed header of one record.</summary>
internal readonly record struct RecordHeader(int Length, ulong Sequence, RecordKind Kind, long Timestamp, int SubjectLength, int HeadersLength)
{
    /// <summary>Bytes of subject, headers and payload (the plaintext), for a message.</summary>
    public int BodyLength(bool encrypted) => Length - RecordFormat.Overhead - (encrypted ? RecordFormat.CipherOverhead : 0);

    public int PayloadLength(bool encrypted) => BodyLength(encrypted) - SubjectLength - HeadersLength;
}

/// <summary>
/// The record format of a message block (all little-endian):
/// <code>
///  0  u32 length        the whole record, this field and the checksum included
///  4  u64 sequence      low 60 bits; the top 4 bits are the RecordKind
/// 12  i64 timestamp     ns since the Unix epoch
/// 20  u16 subject length
/// 22  u32 header length
/// 26  body              subject, headers, payload; encrypted: nonce(12), ciphertext, tag(16)
///  .  u32 CRC-32C       of every byte before it
/// </code>
/// The checksum covers the length, so a torn or overwritten length never parses as a record. Zeros (a preallocated
/// tail) have length 0 and end the scan.
/// </summary>
internal static class RecordFormat
{
    public const int HeaderSize = 26;
    public const int Overhead = HeaderSize + 4;
    public const int NonceSize = 12;
    public const int TagSize = 16;
    public const int CipherOverhead = NonceSize + TagSize;

    /// <summary>A record longer than this is taken as corruption (a message is limited well below it).</summary>
    public const int MaxRecordLength = 64 << 20;

    private const ulong SequenceMask = (1UL << 60) - 1;

    /// <summary>The on-disk length of a message record.</summary>
    public static int MessageLength(int subject, int headers, int payload, bool encrypted) =>
        Overhead + subject + headers + payload + (encrypted ? CipherOverhead : 0);

    /// <summary>
    /// The size a message counts for in the stream's bytes and <c>max_bytes</c>: nats-server's file store formula
    /// (record header 22 + subject + [4 + headers] + payload + hash 8), so limits behave as they do there.
    /// </summary>
    public static ulong AccountedSize(int subject, int headers, int payload) =>
        (ulong)(22 + subject + payload + 8 + (headers > 0 ? 4 + headers : 0));

    /// <summary>Writes the fixed header; the body follows at <see cref="HeaderSize"/>.</summary>
    public static void WriteHeader(Span<byte> record, ulong sequence, RecordKind kind, long timestamp, int subjectLength, int headersLength)
    {
        BinaryPrimitives.WriteInt32LittleEndian(record, record.Length);
        BinaryPrimitives.WriteUInt64LittleEndian(record[4..], sequence | ((ulong)kind << 60));
        BinaryPrimitives.WriteInt64LittleEndian(record[12..], timestamp);
        BinaryPrimitives.WriteUInt16LittleEndian(record[20..], (ushort)subjectLength);
        BinaryPrimitives.WriteInt32LittleEndian(record[22..], headersLength);
    }

    /// <summary>Computes and writes the checksum into the last four bytes.</summary>
    public static void Seal(Span<byte> record) =>
        BinaryPrimitives.WriteUInt32LittleEndian(record[^4..], Crc32C.Compute(record[..^4]));

    /// <summary>A marker record (tombstone or head) of <see cref="Overhead"/> bytes.</summary>
    public static void WriteMarker(Span<byte> record, ulong sequence, RecordKind kind, long timestamp)
    {
        WriteHeader(record[..Overhead], sequence, kind, timestamp, 0, 0);
        Seal(record[..Overhead]);
    }

    /// <summary>
    /// Parses and verifies the record at the start of <paramref name="data"/>: its length is plausible and within
    /// the data, and its checksum matches. Returns false for anything else (torn, garbage, zeros, a flipped bit).
    /// </summary>
    public static bool TryRead(ReadOnlySpan<byte> data, out RecordHeader header)
    {
        header = default;
        if (data.Length < Overhead)
        {
            return false;
        }

        var length = BinaryPrimitives.ReadInt32LittleEndian(data);
        if (length < Overhead || length > MaxRecordLength || length > data.Length)
        {
            return false;
        }

        var record = data[..length];
        if (BinaryPrimitives.ReadUInt32LittleEndian(record[^4..]) != Crc32C.Compute(record[..^4]))
        {
            return false;
        }

        var raw = BinaryPrimitives.ReadUInt64LittleEndian(record[4..]);
        var kind = (RecordKind)(raw >> 60);
        var subjectLength = BinaryPrimitives.ReadUInt16LittleEndian(record[20..]);
        var headersLength = BinaryPrimitives.ReadInt32LittleEndian(record[22..]);
        if (kind > RecordKind.Ttl || headersLength < 0 || subjectLength + (long)headersLength > length - Overhead)
        {
            return false;
        }

        header = new RecordHeader(length, raw & SequenceMask, kind, BinaryPrimitives.ReadInt64LittleEndian(record[12..]), subjectLength, headersLength);
        return true;
    }

    /// <summary>Parses the header of a record already verified (in a loaded block, or written by this process).</summary>
    public static RecordHeader ReadVerified(ReadOnlySpan<byte> record)
    {
        var raw = BinaryPrimitives.ReadUInt64LittleEndian(record[4..]);
        return new RecordHeader(
            BinaryPrimitives.ReadInt32LittleEndian(record),
            raw & SequenceMask,
            (RecordKind)(raw >> 60),
            BinaryPrimitives.ReadInt64LittleEndian(record[12..]),
            BinaryPrimitives.ReadUInt16LittleEndian(record[20..]),
            BinaryPrimitives.ReadInt32LittleEndian(record[22..]));
    }

    /// <summary>The length field of a record, unverified (to step over a record already known good).</summary>
    public static int PeekLength(ReadOnlySpan<byte> data) => BinaryPrimitives.ReadInt32LittleEndian(data);

    /// <summary>Rewrites the kind of a verified record (erase) and re-seals it.</summary>
    public static void SetKind(Span<byte> record, RecordKind kind)
    {
        var raw = BinaryPrimitives.ReadUInt64LittleEndian(record[4..]) & SequenceMask;
        BinaryPrimitives.WriteUInt64LittleEndian(record[4..], raw | ((ulong)kind << 60));
        Seal(record);
    }
}
