using System.Formats.Tar;
using System.Globalization;
using System.Text;
using System.Text.Json;
using Broker.Abstractions;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;
using Broker.JetStream.Internal.Streams;

namespace Broker.JetStream.Internal.Snapshots;

/// <summary>
/// Writes a stream's snapshot in nats-server 2.9's archive format (filestore.go <c>streamSnapshot</c>), from any store
/// through the storage contract: a Snappy-framed tar (which nats-server's S2 reader takes) of <c>meta.inf</c> (the
/// stream's <c>FileStreamInfo</c> JSON: <c>Created</c> and the configuration), <c>meta.sum</c> (its HighwayHash in hex),
/// the messages as message blocks (<see cref="MessageBlockWriter"/>) and, unless left out, each consumer's
/// <c>obs/&lt;name&gt;/meta.inf</c> (<c>FileConsumerInfo</c>: <c>Created</c>, <c>Name</c>, the configuration),
/// <c>meta.sum</c> and <c>o.dat</c> (<see cref="ConsumerStateCodec"/>).
/// </summary>
internal static class StreamArchiveWriter
{
    /// <summary>A block is closed once it holds this much, as nats-server's file store rolls its blocks.</summary>
    private const int BlockTarget = 4 << 20;

    /// <summary>Writes the archive of <paramref name="stream"/>'s sequences <paramref name="first"/> to <paramref name="last"/>.</summary>
    /// <param name="output">Where the archive goes.</param>
    /// <param name="stream">The stream.</param>
    /// <param name="first">The stream's first sequence when the snapshot was taken.</param>
    /// <param name="last">Its last sequence then.</param>
    /// <param name="lastTimestamp">The last message's time then.</param>
    /// <param name="includeConsumers">Whether to write the consumers.</param>
    public static void Write(Stream output, MessageStream stream, ulong first, ulong last, long lastTimestamp, bool includeConsumers)
    {
        using var framed = new SnappyFrameWriter(output);
        using (var tar = new TarWriter(framed, TarEntryFormat.Pax, leaveOpen: true))
        {
            var modified = DateTimeOffset.UtcNow;
            var meta = WithLeadingFields(JsonSerializer.SerializeToUtf8Bytes(stream.Config, JetStreamJson.Context.StreamConfig), ("Created", GoTime.Format(stream.Created)));
            WriteFile(tar, "meta.inf", meta, modified);
            WriteFile(tar, "meta.sum", Sum(stream.Name, meta), modified);
            WriteMessages(tar, stream, first, last, lastTimestamp, modified);
            if (includeConsumers)
            {
                foreach (var consumer in stream.ConsumersByName())
                {
                    var consumerMeta = WithLeadingFields(
                        JsonSerializer.SerializeToUtf8Bytes(consumer.Config, JetStreamJson.Context.ConsumerConfig),
                        ("Created", GoTime.Format(consumer.Created)),
                        ("Name", consumer.Name));
                    var directory = "obs/" + consumer.Name + "/";
                    WriteFile(tar, directory + "meta.inf", consumerMeta, modified);
                    WriteFile(tar, directory + "meta.sum", Sum(stream.Name + "/" + consumer.Name, consumerMeta), modified);
                    WriteFile(tar, directory + "o.dat", ConsumerStateCodec.Encode(consumer.Store.GetState(), GoTime.NowNanoseconds()), modified);
                }
            }
        }

        framed.Flush();
    }

    private static void WriteMessages(TarWriter tar, MessageStream stream, ulong first, ulong last, long lastTimestampThen, DateTimeOffset modified)
    {
        var index = 1;
        var block = new MessageBlockWriter(stream.Name, index);
        var message = new StoredMessage();
        var expected = first;
        long lastTimestamp = 0;
        while (expected <= last)
        {
            var status = stream.Store.LoadNext(ReadOnlySpan<byte>.Empty, expected, message, out _);
            var next = status == LoadStatus.Found && message.Sequence <= last ? message.Sequence : last + 1;
            for (; expected < next; expected++)
            {
                // Removed since (or before) the snapshot's state: an empty record keeps every sequence in its place.
                block.AppendDeleted(expected, lastTimestamp);
            }

            if (next > last)
            {
                break;
            }

            lastTimestamp = message.Timestamp;
            block.Append(message.Sequence, message.Timestamp, message.Subject.Span, message.Headers.Span, message.Payload.Span);
            expected = message.Sequence + 1;
            if (block.Size >= BlockTarget && expected <= last)
            {
                WriteBlock(tar, block, modified);
                block = new MessageBlockWriter(stream.Name, ++index);
            }
        }

        if (block.Size == 0 && last > 0)
        {
            // An empty stream keeps its last sequence: one empty record of it (nats-server keeps an empty block).
            block.AppendDeleted(last, lastTimestampThen);
        }

        WriteBlock(tar, block, modified);
    }

    private static void WriteBlock(TarWriter tar, MessageBlockWriter block, DateTimeOffset modified)
    {
        var name = "msgs/" + block.Index.ToString(CultureInfo.InvariantCulture);
        WriteFile(tar, name + ".idx", block.IndexFile(), modified);
        WriteFile(tar, name + ".blk", block.Block, modified);
    }

    private static void WriteFile(TarWriter tar, string name, ReadOnlyMemory<byte> content, DateTimeOffset modified)
    {
        var entry = new PaxTarEntry(TarEntryType.RegularFile, name)
        {
            Mode = UnixFileMode.UserRead | UnixFileMode.UserWrite,
            ModificationTime = modified,
            UserName = "nats",
            GroupName = "nats",
        };
        using var data = new MemoryStream(content.ToArray(), writable: false);
        entry.DataStream = data;
        tar.WriteEntry(entry);
    }

    /// <summary><c>meta.sum</c>: the hex of the metadata's HighwayHash-64 keyed by <c>sha256(key)</c>.</summary>
    private static byte[] Sum(string key, byte[] meta)
    {
        Span<byte> sum = stackalloc byte[8];
        System.Buffers.Binary.BinaryPrimitives.WriteUInt64LittleEndian(sum, HighwayHash64.KeyedBy(key).Compute(meta));
        return Encoding.ASCII.GetBytes(Convert.ToHexStringLower(sum));
    }

    /// <summary>A JSON object with string fields put before its own, as Go writes a struct that embeds another after them.</summary>
    private static byte[] WithLeadingFields(byte[] json, params (string Name, string Value)[] fields)
    {
        using var output = new MemoryStream();
        using (var writer = new Utf8JsonWriter(output))
        {
            writer.WriteStartObject();
            foreach (var (name, value) in fields)
            {
                writer.WriteString(name, value);
            }

            using var document = JsonDocument.Parse(json);
            foreach (var property in document.RootElement.EnumerateObject())
            {
                property.WriteTo(writer);
            }

            writer.WriteEndObject();
        }

        return output.ToArray();
    }
}
