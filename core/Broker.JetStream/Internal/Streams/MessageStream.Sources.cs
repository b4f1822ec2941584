using System.Buffers;
using System.Text;
using Broker.Abstractions;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Streams;

/// <summary>
/// The stream's side of its <c>mirror</c> or <c>sources</c> (<see cref="StreamSources"/>): the appends of what they
/// bring in, through the same checks as a publish (nats-server's <c>processJetStreamMsg</c> with and without
/// <c>lseq</c>), under the stream's gate.
/// </summary>
internal sealed partial class MessageStream
{
    // Null for a stream without mirror or sources: the publish path never looks at it.
    private StreamSources? sources;

    /// <summary>The sequence of the last message taken in (stored or skipped).</summary>
    public ulong LastSequence
    {
        get
        {
            lock (gate)
            {
                return ingest.LastSequence;
            }
        }
    }

    private void StartSources(StreamConfig current)
    {
        sources = StreamSources.StartFor(this, current);
    }

    private void UpdateSources(StreamConfig updated)
    {
        if (sources is not null)
        {
            sources.Update(updated);
        }
        else
        {
            StartSources(updated);
        }
    }

    /// <summary>Uses up the sequences up to <paramref name="last"/> (a mirror whose origin no longer has them).</summary>
    public void SkipMessages(ulong last)
    {
        lock (gate)
        {
            if (!stopped)
            {
                ingest.SkipTo(last);
            }
        }
    }

    /// <summary>
    /// Appends a mirrored message at its origin's <paramref name="sequence"/> and with its origin's
    /// <paramref name="timestamp"/> (nats-server's <c>processInboundMirrorMsg</c>; the current time where the store
    /// cannot keep a given one); false when the stream's last sequence is not the one before it (nats-server's
    /// <c>errLastSeqMismatch</c>), with <paramref name="error"/> the error of an append that failed otherwise.
    /// </summary>
    public bool AppendMirrored(ulong sequence, long timestamp, ReadOnlySpan<byte> subject, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload, out ApiError? error)
    {
        var headerBlock = headers.IsEmpty ? default : NatsHeaders.Contiguous(headers, ref headerScratch);
        IngestOutcome outcome;
        lock (gate)
        {
            error = null;
            if (stopped)
            {
                return true;
            }

            if (!ingest.AlignTo(sequence - 1))
            {
                return false;
            }

            outcome = ingest.Append(config, subject, headerBlock, headers, payload, hasReply: false, sourced: true, timestamp);
        }

        error = outcome.Error;
        ApplyRollup(outcome, subject);
        return true;
    }

    /// <summary>Appends a sourced message (its <c>Nats-Stream-Source</c> header already set) as a publish would be; the error of a failed append, or null.</summary>
    public ApiError? AppendSourced(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> headerBlock, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload) =>
        AppendCore(subject, headerBlock, headers, payload, expired: 0);

    /// <summary>
    /// Appends a sourced message, or (<paramref name="expired"/> not 0) the subject delete marker of that expired
    /// message, which is not a sourced message and is stored only while no newer message came on the subject: the
    /// expired one is still there (stores keep it for the marker, whose rollup removes it) or already gone.
    /// </summary>
    private ApiError? AppendCore(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> headerBlock, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload, ulong expired)
    {
        var marker = expired != 0;
        // As OnInbound: RePublisher.Sync from prepare to publish where the stream republishes.
        var republishing = rePublisher?.Sync;
        republishing?.Enter();
        try
        {
            ReadOnlySpan<byte> republishTo = default;
            var republish = false;
            IngestOutcome outcome;
            lock (gate)
            {
                if (stopped || (marker && Store.LoadLast(subject, markerScratch ??= new StoredMessage()) == LoadStatus.Found && markerScratch.Sequence != expired))
                {
                    return null;
                }

                // Republished as a publish would be (nats-server's processInboundSourceMsg goes through processJetStreamMsg).
                republish = rePublisher is not null && rePublisher.Prepare(Store, subject, out republishTo);
                outcome = ingest.Append(config, subject, headerBlock, headers, payload, hasReply: false, sourced: !marker);
            }

            ApplyRollup(outcome, subject);
            if (republish && outcome.Stored)
            {
                rePublisher!.Publish(Client, republishTo, subject, outcome.Sequence, headerBlock, payload);
            }

            return outcome.Error;
        }
        finally
        {
            republishing?.Exit();
        }
    }

    /// <summary>Answers the direct gets of the mirror's origin from this stream (nats-server <c>subscribeToMirrorDirect</c>).</summary>
    public IBusSubscription[] SubscribeMirrorDirect(string origin)
    {
        var get = new DirectGet(Store, Client, NameBytes, Encoding.UTF8.GetBytes(origin));
        return
        [
            Client.Subscribe(ApiSubjects.DirectGetPrefix + origin, "_sys_", get.OnRequest),
            Client.Subscribe(ApiSubjects.DirectGetPrefix + origin + ".>", "_sys_", get.OnLastBySubject),
        ];
    }
}
