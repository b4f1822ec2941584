using System.Globalization;
using System.Text;
using Broker.Abstractions;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Streams;

/// <summary>
/// nats-server 2.11's subject delete markers (ADR-43, <c>subject_delete_marker_ttl</c>): when <c>max_age</c> or a
/// message's <c>Nats-TTL</c> removes the last message of a subject, the stream stores an empty message on that subject
/// with <c>Nats-Marker-Reason: MaxAge</c>, a <c>Nats-TTL</c> of the stream's marker TTL and <c>Nats-Rollup: sub</c>
/// (memstore/filestore <c>handleRemovalOrSdm</c>), so consumers and key-value watchers see the subject go. A removed
/// message that was itself a marker (or a key-value purge) leaves none (<c>isSubjectDeleteMarker</c>).
/// </summary>
internal static class SubjectDeleteMarkers
{
    private static ReadOnlySpan<byte> MarkerReason => "Nats-Marker-Reason"u8;

    private static ReadOnlySpan<byte> KvOperation => "KV-Operation"u8;

    /// <summary>The marker TTL in whole seconds (nats-server's <c>int64(SubjectDeleteMarkerTTL.Seconds())</c>); 0 for none.</summary>
    public static long Seconds(StreamConfig config) => config.SubjectDeleteMarkerTtl / 1_000_000_000;

    /// <summary>The header block of a marker left by a stream whose marker TTL is <paramref name="seconds"/>.</summary>
    public static byte[] Headers(long seconds) => Encoding.ASCII.GetBytes(
        $"NATS/1.0\r\nNats-Marker-Reason: MaxAge\r\nNats-TTL: {ConfigSyntax.FormatDuration(seconds * 1_000_000_000)}\r\nNats-Rollup: sub\r\n\r\n");

    /// <summary>Whether a removed message's headers make it a marker already (nats-server <c>isSubjectDeleteMarker</c>).</summary>
    public static bool IsMarker(ReadOnlySpan<byte> headers) =>
        !headers.IsEmpty
        && ((NatsHeaderBlock.TryGetValue(headers, MarkerReason, out var reason) && !reason.IsEmpty)
            || (NatsHeaderBlock.TryGetValue(headers, KvOperation, out var operation) && operation.SequenceEqual("PURGE"u8)));

    /// <summary>
    /// A stream with markers raises a shorter <c>Nats-TTL</c> to the marker TTL, rewriting the header as whole
    /// seconds, unless it keeps one message per subject (nats-server's <c>processJetStreamMsg</c>: a marker could
    /// otherwise be missed); the header block to store, or null to store the one received.
    /// </summary>
    public static byte[]? RaiseTimeToLive(StreamConfig config, ReadOnlySpan<byte> headerBlock, ref TimeSpan timeToLive)
    {
        var seconds = Seconds(config);
        if (seconds <= 0 || config.MaxMsgsPerSubject == 1 || timeToLive <= TimeSpan.Zero || timeToLive >= TimeSpan.FromSeconds(seconds))
        {
            return null;
        }

        timeToLive = TimeSpan.FromSeconds(seconds);
        var text = Encoding.UTF8.GetString(headerBlock);
        var lines = text.Split("\r\n").ToList();
        lines.RemoveAll(line => line.StartsWith("Nats-TTL:", StringComparison.Ordinal));

        // genHeader appends the new line after the others, before the blank line that ends the block.
        var end = lines.FindLastIndex(line => line.Length > 0) + 1;
        lines.Insert(end, "Nats-TTL: " + seconds.ToString(CultureInfo.InvariantCulture));
        return Encoding.UTF8.GetBytes(string.Join("\r\n", lines));
    }
}
