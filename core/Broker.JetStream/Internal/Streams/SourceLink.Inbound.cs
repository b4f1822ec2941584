using System.Buffers;
using System.Buffers.Text;
using System.Diagnostics;
using System.Text;
using System.Text.Json;
using Broker.Abstractions;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Streams;

/// <summary>
/// What arrives from the origin: the consumer's create reply, then its deliveries (nats-server
/// <c>processInboundMirrorMsg</c>, <c>processInboundSourceMsg</c>): flow-control requests are answered, heartbeats
/// checked for a gap, messages tracked by their ack reply (<c>$JS.ACK.&lt;stream&gt;.&lt;consumer&gt;.&lt;dc&gt;.&lt;sseq&gt;.&lt;dseq&gt;.&lt;ts&gt;.&lt;pending&gt;</c>)
/// and appended: a mirror's at the origin's sequence (skipping what the origin no longer has), a source's as a publish
/// with <c>Nats-Stream-Source: &lt;iname&gt; &lt;sseq&gt;</c> replacing any it carried.
/// </summary>
internal sealed partial class SourceLink
{
    // nats-server dgetCaughtUpThresh: a mirror answers its origin's direct gets once this close.
    private const ulong DirectGetCaughtUp = 10;

    private readonly ArrayBufferWriter<byte> sourceHeaders = new();

    // Deliveries that came before the create reply (guarded by sync; replayed in order by the reply's handler).
    private List<EarlyMessage>? early;
    private byte[]? headerScratch;
    private byte[]? strippedScratch;
    private byte[]? sourceValue;

    private void OnCreateReply(in BusMessage message, int setup)
    {
        string? name = null;
        ulong delivered = 0;
        ApiError? failure = null;
        try
        {
            using var document = JsonDocument.Parse(message.Payload.ToArray());
            var root = document.RootElement;
            if (root.TryGetProperty("error", out var problem))
            {
                failure = problem.Deserialize(JetStreamJson.Context.ApiError);
            }
            else
            {
                name = root.GetProperty("name").GetString();
                delivered = root.GetProperty("delivered").GetProperty("stream_seq").GetUInt64();
            }
        }
        catch (Exception ex) when (ex is JsonException or KeyNotFoundException or InvalidOperationException or FormatException)
        {
            failure = ApiErrors.InvalidJson;
        }

        // Read before sync, which is a leaf (the stream's gate is taken with it released).
        var mirrorLast = isMirror && name is not null ? stream.LastSequence : 0;
        List<EarlyMessage>? replay;
        lock (sync)
        {
            if (stopped || setup != generation)
            {
                return;
            }

            replies?.Dispose();
            replies = null;
            setupInProgress = false;
            if (failure is not null || name is null)
            {
                error = failure ?? ApiErrors.InvalidJson;
                early = null;
                JetStreamLog.SourceConsumerFailed(stream.Account.Logger, isMirror ? "mirror" : "source", error.Description);
                ScheduleRetryLocked(setupSequence, setupTime);
                return;
            }

            if (isMirror)
            {
                // nats-server 2.14: a consumer that starts below what the mirror holds (an origin created again and
                // still short of it) delivers what is skipped as held, not a gap to start over for.
                streamSeq = Math.Max(delivered, mirrorLast);
            }
            else if (streamSeq < delivered)
            {
                // nats-server 2.14: never back below what the source holds (2.9.10 set delivered + 1, and took again
                // what an origin created anew and started below its start sequence delivered).
                streamSeq = delivered;
            }

            consumerName = Encoding.UTF8.GetBytes(name);
            deliverSeq = 0;
            running = true;
            lastHeard = Stopwatch.GetTimestamp();
            replay = early;
            early = null;
        }

        if (isMirror)
        {
            // The origin no longer has what comes before its consumer's start: those sequences are used up here too.
            stream.SkipMessages(delivered);
        }

        foreach (var held in replay ?? [])
        {
            Process(held.Subject, held.Reply, new ReadOnlySequence<byte>(held.Headers), new ReadOnlySequence<byte>(held.Payload));
        }
    }

    private void OnDelivery(in BusMessage message, int setup)
    {
        lock (sync)
        {
            if (stopped || setup != generation)
            {
                return;
            }

            if (consumerName is null)
            {
                if (setupInProgress)
                {
                    (early ??= []).Add(new EarlyMessage(message.Subject.ToArray(), message.ReplyTo.ToArray(), message.Headers.ToArray(), message.Payload.ToArray()));
                }

                return;
            }
        }

        Process(message.Subject, message.ReplyTo, message.Headers, message.Payload);
    }

    /// <summary>The state stream info reports (nats-server <c>sourceInfo</c>).</summary>
    public StreamSourceInfoModel Info()
    {
        lock (sync)
        {
            var external = Source.External;
            return new StreamSourceInfoModel
            {
                Name = Source.Name,
                External = external is null ? null : new ExternalStreamConfig { Api = external.Api, Deliver = external.Deliver },
                Lag = lag,
                Active = lastHeard == 0 ? -1 : Stopwatch.GetElapsedTime(lastHeard).Ticks * 100,
                Error = error,
                SubjectTransforms = Source.SubjectTransforms?.ConvertAll(static transform => transform with { }),
            };
        }
    }

    /// <summary>
    /// One delivery of the current consumer; <paramref name="subject"/> is the message's own, stored as it is or, with
    /// <c>subject_transforms</c>, as the first transform whose source it is within makes it (nats-server 2.10.0).
    /// </summary>
    private void Process(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        var headerBlock = headers.IsEmpty ? default : NatsHeaders.Contiguous(headers, ref headerScratch);
        if (payload.IsEmpty && headerBlock.StartsWith("NATS/1.0 100 "u8))
        {
            OnControl(reply, headerBlock);
            return;
        }

        if (!SourceMessages.TryParseAckReply(reply, out _, out var consumer, out var deliveryCount, out var sseq, out var sseqText, out var dseq, out var timestamp, out var pending))
        {
            return;
        }

        if (transforms is { } all)
        {
            subject = Transform(all, subject);
        }

        if (isMirror)
        {
            OnMirrored(subject, consumer, deliveryCount, sseq, dseq, timestamp, pending, headers, payload);
        }
        else
        {
            OnSourced(subject, consumer, deliveryCount, sseq, sseqText, dseq, pending, headerBlock, payload);
        }
    }

    // The transforms' buffers are used one delivery at a time: the link's handlers run in turn.
    private static ReadOnlySpan<byte> Transform(StreamSubjectTransform[] all, ReadOnlySpan<byte> subject)
    {
        foreach (var transform in all)
        {
            if (transform.TryApply(subject, out var transformed))
            {
                return transformed;
            }
        }

        return subject;
    }

    private void OnControl(ReadOnlySpan<byte> reply, ReadOnlySpan<byte> headerBlock)
    {
        string? answer = null;
        var restart = false;
        lock (sync)
        {
            if (consumerName is null)
            {
                return;
            }

            lastHeard = Stopwatch.GetTimestamp();
            if (!reply.IsEmpty)
            {
                answer = Encoding.UTF8.GetString(reply);
            }
            else if (NatsHeaders.TryGetUInt64(headerBlock, "Nats-Last-Consumer"u8, out var lastDelivered, out _) && lastDelivered > 0 && lastDelivered != deliverSeq)
            {
                // A heartbeat says more was delivered than arrived here.
                restart = true;
            }
            else if (NatsHeaderBlock.TryGetValue(headerBlock, "Nats-Consumer-Stalled"u8, out var stalled) && !stalled.IsEmpty)
            {
                answer = Encoding.UTF8.GetString(stalled);
            }
        }

        if (answer is not null)
        {
            Send(answer, null, null);
        }

        if (restart)
        {
            Restart();
        }
    }

    /// <summary>
    /// A delivery at or below the origin sequence the mirror or source holds (nats-server 2.14, "Ignore older
    /// messages"): an origin deleted and created again numbers from one, and a consumer asked to start past an empty
    /// origin's end starts at its beginning. Not taken, only counted as delivered, so the next heartbeat finds no gap.
    /// </summary>
    private void CountHeldLocked(ulong dseq)
    {
        if (dseq == deliverSeq + 1)
        {
            deliverSeq++;
        }
    }

    private bool IsCurrentLocked(ReadOnlySpan<byte> consumer) =>
        consumerName is not null && consumer.SequenceEqual(consumerName);

    private void OnMirrored(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> consumer, ulong deliveryCount, ulong sseq, ulong dseq, long timestamp, ulong pending, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        ulong oldLag, oldSseq, oldDseq, skipTo = 0;
        var subscribeDirect = false;
        lock (sync)
        {
            if (!IsCurrentLocked(consumer) || deliveryCount > 1)
            {
                return;
            }

            lastHeard = Stopwatch.GetTimestamp();
            (oldLag, oldSseq, oldDseq) = (lag, streamSeq, deliverSeq);
            if (sseq == streamSeq + 1)
            {
                deliverSeq = dseq;
                streamSeq++;
            }
            else if (sseq <= streamSeq)
            {
                CountHeldLocked(dseq);
                return;
            }
            else if (dseq == deliverSeq + 1)
            {
                // The origin expired or deleted what lies between.
                skipTo = sseq - 1;
                deliverSeq++;
                streamSeq = sseq;
            }
            else
            {
                goto restart;
            }

            lag = pending == 0 ? 0 : pending - 1;
            subscribeDirect = stream.Config.MirrorDirect && !directSubscribed && pending < DirectGetCaughtUp;
            directSubscribed |= subscribeDirect;
        }

        if (subscribeDirect)
        {
            // Caught up: answer the origin's direct gets too (subscribed outside the lock, which stays a leaf).
            var subscriptions = stream.SubscribeMirrorDirect(Source.Name);
            lock (sync)
            {
                (mirrorDirect, subscriptions) = directSubscribed && mirrorDirect is null ? (subscriptions, null) : (mirrorDirect, subscriptions);
            }

            foreach (var subscription in subscriptions ?? [])
            {
                subscription.Dispose();
            }
        }

        if (skipTo > 0)
        {
            stream.SkipMessages(skipTo);
        }

        if (stream.AppendMirrored(sseq, timestamp, subject, headers, payload, out var failure))
        {
            if (failure is not null)
            {
                JetStreamLog.SourceAppendFailed(stream.Account.Logger, "mirror", stream.Account.Name, stream.Name, failure.Description);
            }

            return;
        }

        // We may have missed messages: start over unless this one is already here.
        var alreadyHere = sseq <= stream.LastSequence;
        lock (sync)
        {
            (streamSeq, deliverSeq) = (oldSseq, oldDseq);
            if (alreadyHere)
            {
                lag = oldLag;
                return;
            }
        }

    restart:
        Restart();
    }

    private void OnSourced(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> consumer, ulong deliveryCount, ulong sseq, ReadOnlySpan<byte> sseqText, ulong dseq, ulong pending, ReadOnlySpan<byte> headerBlock, in ReadOnlySequence<byte> payload)
    {
        ulong previous;
        lock (sync)
        {
            if (!IsCurrentLocked(consumer) || deliveryCount > 1)
            {
                return;
            }

            lastHeard = Stopwatch.GetTimestamp();
            previous = streamSeq;
            if (sseq <= streamSeq)
            {
                CountHeldLocked(dseq);
                return;
            }

            if (dseq == deliverSeq + 1)
            {
                deliverSeq++;
                streamSeq = sseq;
            }
            else if (dseq > deliverSeq)
            {
                goto restart;
            }
            else
            {
                return;
            }

            lag = pending == 0 ? 0 : pending - 1;
        }

        var block = SourceMessages.StripSourceHeader(headerBlock, ref strippedScratch);
        sourceHeaders.ResetWrittenCount();
        var value = sourceValue ??= new byte[indexNameBytes.Length + 1 + 20];
        indexNameBytes.CopyTo(value);
        value[indexNameBytes.Length] = (byte)' ';
        sseqText.CopyTo(value.AsSpan(indexNameBytes.Length + 1));
        NatsHeaders.Append(sourceHeaders, block, "Nats-Stream-Source", value.AsSpan(0, indexNameBytes.Length + 1 + sseqText.Length));
        var failure = stream.AppendSourced(subject, sourceHeaders.WrittenSpan, new ReadOnlySequence<byte>(sourceHeaders.WrittenMemory), payload);
        if (failure is null)
        {
            return;
        }

        JetStreamLog.SourceAppendFailed(stream.Account.Logger, $"source \"{IndexName}\"", stream.Account.Name, stream.Name, failure.Description);
        lock (sync)
        {
            streamSeq = previous;
        }

    restart:
        Restart();
    }

    private sealed record EarlyMessage(byte[] Subject, byte[] Reply, byte[] Headers, byte[] Payload);
}
