using System.Buffers;
using System.Buffers.Text;
using Broker.Abstractions;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Streams;

/// <summary>
/// A stream's <c>republish</c> (nats-server 2.9.10 <c>processJetStreamMsg</c>): a stored message whose subject is
/// within the source is published again, without a reply subject, to the destination the transform makes of its
/// subject, in the stream's account, after the rollup it asked for and before its pub ack. Its headers are the stored
/// ones with <c>Nats-Stream</c>, <c>Nats-Subject</c>, <c>Nats-Sequence</c> and <c>Nats-Last-Sequence</c> (the
/// sequence of the subject's previous message, 0 when it had none) added, and with <c>headers_only</c>
/// <c>Nats-Msg-Size</c> (the payload's length) and no payload. 2.9.10 sends no <c>Nats-Time-Stamp</c> here (2.10
/// adds it). Like every message JetStream sends, it is not subject to the account's mappings.
/// </summary>
/// <remarks>
/// Used by the stream's ingest only, one message at a time: <see cref="Prepare"/> under the stream's gate before the
/// append, <see cref="Publish"/> after it outside the gate. The destination and the headers are written into buffers of
/// this object, so a republish allocates nothing once they have grown to fit; the stream holds <see cref="Sync"/> from
/// before <see cref="Prepare"/> until after <see cref="Publish"/>, because its own publishers and its sources' deliveries
/// arrive on different threads and would otherwise overwrite each other's destination.
/// </remarks>
internal sealed class RePublisher
{
    private readonly StreamSubjectTransform transform;
    private readonly byte[] streamName;
    private readonly bool headersOnly;
    private readonly StoredMessage last = new();
    private readonly ArrayBufferWriter<byte> headers = new(256);
    private byte[] deliverAs = new byte[64];
    private ulong previous;

    private RePublisher(StreamSubjectTransform transform, byte[] streamName, bool headersOnly)
    {
        this.transform = transform;
        this.streamName = streamName;
        this.headersOnly = headersOnly;
    }

    /// <summary>Held by the stream around one message's prepare, append and publish (taken before the stream's gate).</summary>
    public Lock Sync { get; } = new();

    /// <summary>The republisher of a checked configuration; null when it has no <c>republish</c>.</summary>
    public static RePublisher? For(StreamConfig config, byte[] streamName)
        => StreamTransformValidation.RePublishTransform(config) is { } transform ? new RePublisher(transform, streamName, config.RePublish!.HeadersOnly) : null;

    /// <summary>
    /// Whether a message about to be stored under <paramref name="subject"/> is republished; if so, its destination is
    /// written and the sequence of the subject's last message read from <paramref name="store"/>. Under the stream's gate.
    /// </summary>
    public bool Prepare(IStreamStore store, ReadOnlySpan<byte> subject, out ReadOnlySpan<byte> destination)
    {
        if (!transform.TryApply(subject, out destination))
        {
            return false;
        }

        previous = store.LoadLast(subject, last) == LoadStatus.Found ? last.Sequence : 0;
        return true;
    }

    /// <summary>Publishes the message stored at <paramref name="sequence"/>, after a <see cref="Prepare"/> that said so.</summary>
    /// <param name="client">The stream's bus client.</param>
    /// <param name="destination">The destination <see cref="Prepare"/> wrote.</param>
    /// <param name="subject">The subject the message was stored under.</param>
    /// <param name="sequence">Its sequence.</param>
    /// <param name="storedHeaders">Its header block, contiguous; empty without headers.</param>
    /// <param name="payload">Its payload.</param>
    public void Publish(IBusClient client, ReadOnlySpan<byte> destination, ReadOnlySpan<byte> subject, ulong sequence, ReadOnlySpan<byte> storedHeaders, in ReadOnlySequence<byte> payload)
    {
        headers.ResetWrittenCount();
        headers.Write(storedHeaders.IsEmpty ? "NATS/1.0\r\n"u8 : storedHeaders[..^2]);
        NatsHeaders.WriteLine(headers, "Nats-Stream: "u8, streamName);
        NatsHeaders.WriteLine(headers, "Nats-Subject: "u8, subject);
        Span<byte> number = stackalloc byte[20];
        NatsHeaders.WriteLine(headers, "Nats-Sequence: "u8, number[..Format(number, sequence)]);
        NatsHeaders.WriteLine(headers, "Nats-Last-Sequence: "u8, number[..Format(number, previous)]);
        if (headersOnly)
        {
            NatsHeaders.WriteLine(headers, "Nats-Msg-Size: "u8, number[..Format(number, (ulong)payload.Length)]);
        }

        headers.Write("\r\n"u8);

        // nats-server maps only what clients and leaf nodes publish, never JetStream's own messages. The bus maps a
        // plain publish of an in-process client and not a delivery as a subject given apart: so the same subject is
        // given twice, the second a copy.
        if (deliverAs.Length < destination.Length)
        {
            deliverAs = new byte[Math.Max(destination.Length, deliverAs.Length * 2)];
        }

        destination.CopyTo(deliverAs);
        var payloadSent = headersOnly ? ReadOnlySequence<byte>.Empty : payload;
        client.Publish(destination, deliverAs.AsSpan(0, destination.Length), default, new ReadOnlySequence<byte>(headers.WrittenMemory), payloadSent);
    }

    private static int Format(Span<byte> into, ulong value)
    {
        Utf8Formatter.TryFormat(value, into, out var written);
        return written;
    }
}
