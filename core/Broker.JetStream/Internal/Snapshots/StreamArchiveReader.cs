using System.Buffers.Binary;
using System.Formats.Tar;
using System.Globalization;
using System.Text.Json;
using Broker.Abstractions;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Snapshots;

/// <summary>A message of an archive, in sequence order; the memory is valid during the call.</summary>
internal delegate void ArchivedMessageHandler(ulong sequence, long timestamp, ReadOnlyMemory<byte> subject, ReadOnlyMemory<byte> headers, ReadOnlyMemory<byte> payload);

/// <summary>A consumer of an archive: its name, creation time, configuration and state.</summary>
internal sealed record ArchivedConsumer(string Name, long Created, ConsumerConfig Config, ConsumerState State);

/// <summary>
/// Reads a snapshot in nats-server 2.9's archive format (see <see cref="StreamArchiveWriter"/>), ours or nats-server's
/// (S2 framing, its blocks with their index files' first sequence and delete maps, erased records, and records deleted
/// after they were written, whose empty record follows them in the same block). A block without its index (nats-server
/// 2.10 and later keep the state in <c>index.db</c>) is refused. The stream's <c>meta.inf</c> comes
/// first (<see cref="ReadMeta"/>), then the blocks and consumers (<see cref="ReadRest"/>). Every message's checksum is
/// verified.
/// </summary>
internal sealed class StreamArchiveReader(Stream archive) : IDisposable
{
    /// <summary>Go's field name of <c>FileStreamInfo.Created</c> (it has no JSON tag).</summary>
    private const string CreatedField = "Created";

    private readonly TarReader tar = new(new S2FrameReader(archive));
    private readonly Dictionary<string, byte[]> consumerMeta = new(StringComparer.Ordinal);
    private readonly Dictionary<string, byte[]> consumerState = new(StringComparer.Ordinal);
    private byte[]? index;
    private int indexNumber = -1;

    /// <summary>The stream's name in <c>meta.inf</c>.</summary>
    public string StreamName { get; private set; } = "";

    /// <summary>The stream's creation time in <c>meta.inf</c> (ns since the Unix epoch; 0 when none).</summary>
    public long Created { get; private set; }

    /// <summary>The last sequence the archive holds (deleted or not).</summary>
    public ulong LastSequence { get; private set; }

    /// <summary>Reads <c>meta.inf</c>, which must come first.</summary>
    /// <exception cref="InvalidDataException">The archive is not a stream snapshot.</exception>
    public void ReadMeta()
    {
        var entry = NextFile() ?? throw new InvalidDataException("snapshot has no stream metadata");
        if (entry.Name != "meta.inf")
        {
            throw new InvalidDataException("unexpected content");
        }

        using var document = JsonDocument.Parse(ReadAll(entry));
        var root = document.RootElement;
        StreamName = root.TryGetProperty("name", out var name) ? name.GetString() ?? "" : "";
        if (root.TryGetProperty(CreatedField, out var created) && created.GetString() is { } text && GoTime.TryParse(text, out var value))
        {
            Created = value;
        }
    }

    /// <summary>Reads the blocks (each live message to <paramref name="onMessage"/>, in order) and the consumers.</summary>
    /// <exception cref="InvalidDataException">The archive is corrupt.</exception>
    public List<ArchivedConsumer> ReadRest(ArchivedMessageHandler onMessage)
    {
        while (NextFile() is { } entry)
        {
            var name = entry.Name;
            if (name.StartsWith("msgs/", StringComparison.Ordinal))
            {
                var file = name["msgs/".Length..];
                if (file.EndsWith(".idx", StringComparison.Ordinal) && int.TryParse(file[..^4], NumberStyles.None, CultureInfo.InvariantCulture, out var n))
                {
                    (index, indexNumber) = (ReadAll(entry), n);
                }
                else if (file.EndsWith(".blk", StringComparison.Ordinal) && int.TryParse(file[..^4], NumberStyles.None, CultureInfo.InvariantCulture, out n))
                {
                    ReadBlock(n, ReadAll(entry), n == indexNumber ? index : null, onMessage);
                }
            }
            else if (name.StartsWith("obs/", StringComparison.Ordinal) && name.Split('/') is [_, var consumer, var leaf] && consumer.Length > 0)
            {
                if (leaf == "meta.inf")
                {
                    consumerMeta[consumer] = ReadAll(entry);
                }
                else if (leaf == "o.dat")
                {
                    consumerState[consumer] = ReadAll(entry);
                }
            }
            else if (name == "errors.txt")
            {
                // nats-server writes this when its snapshot failed half way.
                throw new InvalidDataException("snapshot reports an error: " + System.Text.Encoding.UTF8.GetString(ReadAll(entry)));
            }
        }

        return [.. consumerMeta.Order().Select(pair => Consumer(pair.Key, pair.Value))];
    }

    private ArchivedConsumer Consumer(string name, byte[] meta)
    {
        var config = JsonSerializer.Deserialize(meta, JetStreamJson.Context.ConsumerConfig) ?? throw new InvalidDataException($"consumer {name} has no configuration");
        long created = 0;
        using (var document = JsonDocument.Parse(meta))
        {
            if (document.RootElement.TryGetProperty(CreatedField, out var value) && value.GetString() is { } text && !GoTime.TryParse(text, out created))
            {
                throw new InvalidDataException($"consumer {name} has an invalid creation time");
            }
        }

        var state = consumerState.TryGetValue(name, out var data) ? ConsumerStateCodec.Decode(data) : new ConsumerState();
        return new ArchivedConsumer(name, created, config, state);
    }

    private void ReadBlock(int number, byte[] block, byte[]? indexFile, ArchivedMessageHandler onMessage)
    {
        // 2.9 snapshots each block's index before the block; 2.10 and later keep the stream's state in index.db
        // instead, whose deletes this reader does not know.
        var first = 0UL;
        var deleted = new HashSet<ulong>();
        ReadIndex(indexFile ?? throw new InvalidDataException($"message block {number} has no index (a snapshot of nats-server 2.10 or later?)"), ref first, deleted);

        // First pass: sequences deleted by a later empty record in this block.
        for (var at = 0; at < block.Length;)
        {
            var (length, sequence, _) = RecordHeader(block, at);
            if ((sequence & MessageBlockWriter.EraseBit) != 0)
            {
                deleted.Add(sequence & ~MessageBlockWriter.EraseBit);
            }

            LastSequence = Math.Max(LastSequence, sequence & ~MessageBlockWriter.EraseBit);
            at += length;
        }

        var hash = HighwayHash64.KeyedBy(StreamName + "-" + number.ToString(CultureInfo.InvariantCulture));
        var memory = block.AsMemory();
        for (var at = 0; at < block.Length;)
        {
            var (length, sequence, headers) = RecordHeader(block, at);
            if (sequence != 0 && (sequence & MessageBlockWriter.EraseBit) == 0 && sequence >= first && !deleted.Contains(sequence))
            {
                var timestamp = BinaryPrimitives.ReadInt64LittleEndian(block.AsSpan(at + 12));
                var subjectLength = BinaryPrimitives.ReadUInt16LittleEndian(block.AsSpan(at + 20));
                var body = at + MessageBlockWriter.RecordHeaderSize;
                var end = at + length - 8;
                var subject = memory.Slice(body, subjectLength);
                var rest = body + subjectLength;
                var headerBlock = ReadOnlyMemory<byte>.Empty;
                if (headers)
                {
                    var headerLength = (int)BinaryPrimitives.ReadUInt32LittleEndian(block.AsSpan(rest));
                    rest += 4;
                    if (headerLength < 0 || rest + headerLength > end)
                    {
                        throw new InvalidDataException("corrupt message record");
                    }

                    headerBlock = memory.Slice(rest, headerLength);
                    rest += headerLength;
                }

                var payload = memory[rest..end];
                hash.Reset();
                hash.Append(block.AsSpan(at + 4, 16));
                hash.Append(subject.Span);
                hash.Append(headerBlock.Span);
                hash.Append(payload.Span);
                if (hash.Finish() != BinaryPrimitives.ReadUInt64LittleEndian(block.AsSpan(end)))
                {
                    throw new InvalidDataException($"message {sequence} failed its checksum");
                }

                onMessage(sequence, timestamp, subject, headerBlock, payload);
            }

            at += length;
        }
    }

    private void ReadIndex(byte[] data, ref ulong first, HashSet<ulong> deleted)
    {
        var at = 2;
        if (data.Length < 2 || data[0] != MessageBlockWriter.Magic
            || !Varint.TryReadUnsigned(data, ref at, out _) || !Varint.TryReadUnsigned(data, ref at, out _)
            || !Varint.TryReadUnsigned(data, ref at, out first) || !Varint.TryReadSigned(data, ref at, out _)
            || !Varint.TryReadUnsigned(data, ref at, out var last) || !Varint.TryReadSigned(data, ref at, out _)
            || !Varint.TryReadUnsigned(data, ref at, out var deletedCount) || at + 8 > data.Length)
        {
            throw new InvalidDataException("corrupt block index");
        }

        first &= ~MessageBlockWriter.EraseBit;
        LastSequence = Math.Max(LastSequence, last & ~MessageBlockWriter.EraseBit);
        at += 8;
        for (ulong i = 0; i < deletedCount && Varint.TryReadUnsigned(data, ref at, out var offset) && offset != 0; i++)
        {
            deleted.Add(first + offset);
        }
    }

    private static (int Length, ulong Sequence, bool Headers) RecordHeader(byte[] block, int at)
    {
        if (at + MessageBlockWriter.RecordHeaderSize > block.Length)
        {
            throw new InvalidDataException("corrupt message block");
        }

        var raw = BinaryPrimitives.ReadUInt32LittleEndian(block.AsSpan(at));
        var length = (int)(raw & ~MessageBlockWriter.HeadersBit);
        var subjectLength = BinaryPrimitives.ReadUInt16LittleEndian(block.AsSpan(at + 20));
        if (length < MessageBlockWriter.RecordHeaderSize + 8 || at + length > block.Length || subjectLength > length - MessageBlockWriter.RecordHeaderSize - 8)
        {
            throw new InvalidDataException("corrupt message block");
        }

        return (length, BinaryPrimitives.ReadUInt64LittleEndian(block.AsSpan(at + 4)), (raw & MessageBlockWriter.HeadersBit) != 0);
    }

    private TarEntry? NextFile()
    {
        while (tar.GetNextEntry() is { } entry)
        {
            if (entry.EntryType is TarEntryType.RegularFile or TarEntryType.V7RegularFile)
            {
                var name = entry.Name;
                if (name.Contains("..", StringComparison.Ordinal) || name.StartsWith('/'))
                {
                    throw new InvalidDataException("unexpected content");
                }

                return entry;
            }

            // nats-server refuses anything but regular files.
            throw new InvalidDataException("unexpected content");
        }

        return null;
    }

    private static byte[] ReadAll(TarEntry entry)
    {
        if (entry.DataStream is null)
        {
            return [];
        }

        using var copy = new MemoryStream((int)Math.Min(entry.Length, int.MaxValue));
        entry.DataStream.CopyTo(copy);
        return copy.ToArray();
    }

    public void Dispose() => tar.Dispose();
}
