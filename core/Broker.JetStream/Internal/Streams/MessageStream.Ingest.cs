using System.Buffers;
using System.Buffers.Text;
using System.Text;
using System.Text.Json;
using Broker.Abstractions;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Streams;

/// <summary>
/// The publish path (nats-server <c>processJetStreamMsg</c>): a message on one of the stream's subjects is checked
/// against its <c>Nats-*</c> headers and the limits, appended to the store, and acknowledged to its reply subject with
/// <c>{"stream":..,"seq":..}</c> once the store says it is durable. Runs inline on the publisher's thread; the ack is
/// formatted into a per-thread buffer, so a publish allocates nothing.
/// </summary>
internal sealed partial class MessageStream
{
    private const int MaxHeaderSize = 64 * 1024;

    [ThreadStatic]
    private static byte[]? ackBuffer;

    [ThreadStatic]
    private static byte[]? headerScratch;

    // The stream's last sequence and message id (nats-server mset.lseq, mset.lmsgId). Guarded by gate.
    private ulong lastSequence;
    private string? lastMessageId;

    private readonly record struct IngestOutcome(ApiError? Error, ulong Sequence, bool Duplicate, bool Respond, int Rollup);

    private void OnInbound(in BusMessage message)
    {
        var headers = message.Headers.IsEmpty ? default : NatsHeaders.Contiguous(message.Headers, ref headerScratch);
        var outcome = Ingest(message.Subject, headers, message.Headers, message.Payload, !message.ReplyTo.IsEmpty);
        if (outcome.Rollup != 0)
        {
            // Nats-Rollup: keep only the new message, of its subject ("sub") or of the stream ("all").
            Purge(outcome.Rollup == 1 ? Encoding.UTF8.GetString(message.Subject) : "", 0, 1);
        }

        if (outcome.Respond)
        {
            Respond(message.ReplyTo, outcome);
        }
    }

    private IngestOutcome Ingest(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> headerBlock, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload, bool hasReply)
    {
        ulong sequence;
        var rollup = 0;
        string? messageId = null;
        lock (gate)
        {
            var respond = hasReply && !config.NoAck;
            if (stopped)
            {
                return default;
            }

            if (config.Sealed)
            {
                return new IngestOutcome(ApiErrors.StreamSealed, 0, false, respond, 0);
            }

            if (!headerBlock.IsEmpty)
            {
                if (NatsHeaders.TryGet(headerBlock, NatsHeaders.ExpectedStream, out var expectedStream) && !expectedStream.SequenceEqual(NameBytes))
                {
                    return new IngestOutcome(ApiErrors.StreamNotMatch, 0, false, respond, 0);
                }

                if (NatsHeaders.TryGet(headerBlock, NatsHeaders.MsgId, out var id) && !id.IsEmpty)
                {
                    EnsureMessageIdsLoaded();
                    if (FindDuplicate(id) is { } original)
                    {
                        return new IngestOutcome(null, original, true, respond, 0);
                    }

                    messageId = Encoding.UTF8.GetString(id);
                }

                if (NatsHeaders.TryGetUInt64(headerBlock, NatsHeaders.ExpectedLastSubjectSequence, out var expectedSubjectSeq, out var hasSubjectSeq) || hasSubjectSeq)
                {
                    var message = ScratchMessage;
                    var found = Store.LoadLast(subject, message) == LoadStatus.Found ? message.Sequence : 0;
                    if (found != expectedSubjectSeq)
                    {
                        return new IngestOutcome(ApiErrors.StreamWrongLastSequence(found), 0, false, respond, 0);
                    }
                }

                if (NatsHeaders.TryGetUInt64(headerBlock, NatsHeaders.ExpectedLastSequence, out var expectedLast, out var hasLast) || hasLast)
                {
                    if (expectedLast != lastSequence)
                    {
                        return new IngestOutcome(ApiErrors.StreamWrongLastSequence(lastSequence), 0, false, respond, 0);
                    }
                }

                if (NatsHeaders.TryGet(headerBlock, NatsHeaders.ExpectedLastMsgId, out var expectedId))
                {
                    // After a restart the last id is known once the window is loaded, as nats-server's lmsgId.
                    EnsureMessageIdsLoaded();
                    if (!expectedId.SequenceEqual(Encoding.UTF8.GetBytes(lastMessageId ?? "")))
                    {
                        return new IngestOutcome(ApiErrors.StreamWrongLastMessageId(lastMessageId ?? ""), 0, false, respond, 0);
                    }
                }

                if (NatsHeaders.TryGet(headerBlock, NatsHeaders.Rollup, out var rollupValue))
                {
                    if (!config.AllowRollup || config.DenyPurge)
                    {
                        return new IngestOutcome(ApiErrors.StreamRollupFailed("rollup not permitted"), 0, false, respond, 0);
                    }

                    rollup = rollupValue.SequenceEqual("sub"u8) ? 1 : rollupValue.SequenceEqual("all"u8) ? 2 : -1;
                    if (rollup < 0)
                    {
                        return new IngestOutcome(ApiErrors.StreamRollupFailed($"rollup value invalid: \"{Encoding.UTF8.GetString(rollupValue)}\""), 0, false, respond, 0);
                    }
                }
            }

            var size = headers.Length + payload.Length;
            if (config.MaxMsgSize >= 0 && size > config.MaxMsgSize)
            {
                return new IngestOutcome(ApiErrors.StreamMessageExceedsMaximum, 0, false, respond, 0);
            }

            if (headers.Length > MaxHeaderSize)
            {
                return new IngestOutcome(ApiErrors.StreamHeaderExceedsMaximum, 0, false, respond, 0);
            }

            if (engine.LimitsExceeded(Medium))
            {
                JetStreamLog.ResourcesExceeded(engine.Logger);
                return new IngestOutcome(ApiErrors.InsufficientResources, 0, false, respond, 0);
            }

            if (config.Retention == RetentionPolicy.Interest && !HasInterestIn(subject))
            {
                // Nobody will ever ask for it: the sequence is used, nothing is kept (nats-server SkipMsg).
                lastSequence = Store.Skip();
                lastMessageId = messageId;
                if (messageId is not null)
                {
                    RememberMessageId(messageId, lastSequence);
                }

                return new IngestOutcome(null, lastSequence, false, respond, 0);
            }

            var result = Store.Store(subject, headers, payload);
            if (!result.IsStored)
            {
                if (result.Status is StoreStatus.Failed)
                {
                    JetStreamLog.StoreFailed(engine.Logger, Name, result.Status.ToString());
                }

                return new IngestOutcome(ApiErrors.StreamStoreFailed(StoreStatusText(result.Status)), 0, false, respond, 0);
            }

            sequence = lastSequence = result.Sequence;
            lastMessageId = messageId;
            if (messageId is not null)
            {
                RememberMessageId(messageId, sequence);
            }

            NotifyConsumers(subject, sequence);
            return new IngestOutcome(null, sequence, false, respond, rollup);
        }
    }

    /// <summary>Sends the pub ack or the error, now when the message is durable, else when the store says it is.</summary>
    private void Respond(ReadOnlySpan<byte> reply, in IngestOutcome outcome)
    {
        if (outcome.Error is { } error)
        {
            Client.Publish(reply, default, ReadOnlySequence<byte>.Empty, new ReadOnlySequence<byte>(ErrorAck(error)));
            return;
        }

        if (outcome.Sequence > Store.DurableSequence)
        {
            QueueDurableAck(reply, outcome.Sequence, outcome.Duplicate);
            return;
        }

        var buffer = ackBuffer ??= new byte[512];
        var length = FormatAck(buffer, outcome.Sequence, outcome.Duplicate);
        Client.Publish(reply, default, ReadOnlySequence<byte>.Empty, new ReadOnlySequence<byte>(buffer, 0, length));
    }

    /// <summary><c>{"stream":"S","seq":N}</c>, with <c>"duplicate":true</c> for a repeated message id.</summary>
    private int FormatAck(byte[] buffer, ulong sequence, bool duplicate)
    {
        var prefix = pubAckPrefix;
        if (buffer.Length < prefix.Length + 40)
        {
            return FormatAck(ackBuffer = new byte[prefix.Length + 64], sequence, duplicate);
        }

        prefix.CopyTo(buffer, 0);
        var length = prefix.Length;
        Utf8Formatter.TryFormat(sequence, buffer.AsSpan(length), out var written);
        length += written;
        if (duplicate)
        {
            ",\"duplicate\":true"u8.CopyTo(buffer.AsSpan(length));
            length += 17;
        }

        buffer[length++] = (byte)'}';
        return length;
    }

    private byte[] ErrorAck(ApiError error)
    {
        var json = JsonSerializer.Serialize(error, JetStreamJson.Context.ApiError);
        return Encoding.UTF8.GetBytes("{\"error\":" + json + ",\"stream\":" + JsonSerializer.Serialize(Name, JetStreamJson.Context.String) + ",\"seq\":0}");
    }

    /// <summary>nats-server's store error texts.</summary>
    private static string StoreStatusText(StoreStatus status) => status switch
    {
        StoreStatus.MaxMessages => "maximum messages exceeded",
        StoreStatus.MaxBytes => "maximum bytes exceeded",
        StoreStatus.MaxMessagesPerSubject => "maximum messages per subject exceeded",
        StoreStatus.MessageTooLarge => "message too large",
        StoreStatus.Closed => "store is closed",
        _ => "store failed",
    };

    // One message the ingest path loads into (expected last subject sequence); guarded by gate.
    private StoredMessage ScratchMessage => scratchMessage ??= new StoredMessage();

    private StoredMessage? scratchMessage;
}
