using System.Buffers;
using Broker.Abstractions;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Streams;

/// <summary>
/// Subject delete markers (nats-server 2.11's <c>subject_delete_marker_ttl</c>, see <see cref="SubjectDeleteMarkers"/>):
/// while the configuration asks for them, the store tells the stream when an expiry empties a subject and the stream
/// stores a marker there through its publish path (limits, consumers, republish), as nats-server's <c>sdmcb</c> does;
/// the marker's <c>Nats-Rollup: sub</c> removes the expired message, which the store kept until then.
/// </summary>
internal sealed partial class MessageStream
{
    private byte[]? markerHeaders;
    private StoredMessage? markerScratch;

    /// <summary>Listens to the store's subject expiries while <paramref name="current"/> has a marker TTL. Under <see cref="gate"/> or before start.</summary>
    private void UpdateMarkers(StreamConfig current)
    {
        var seconds = SubjectDeleteMarkers.Seconds(current);
        markerHeaders = seconds > 0 ? SubjectDeleteMarkers.Headers(seconds) : null;
        Store.RegisterSubjectExpiries(seconds > 0 ? OnSubjectExpired : null);
    }

    /// <summary>The store's <see cref="SubjectExpiredHandler"/>: a marker where the removed message was not one.</summary>
    private void OnSubjectExpired(ulong sequence, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> headers)
    {
        var marker = Volatile.Read(ref markerHeaders);
        if (marker is null || SubjectDeleteMarkers.IsMarker(headers))
        {
            return;
        }

        AppendCore(subject, marker, new ReadOnlySequence<byte>(marker), ReadOnlySequence<byte>.Empty, expired: sequence);
    }
}
