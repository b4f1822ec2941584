using System.Buffers;
using System.Text;
using Broker.Abstractions;
using Broker.JetStream.Internal.Api;
using Broker.JetStream.Internal.Models;
using Microsoft.Extensions.Logging;

namespace Broker.JetStream.Internal.Streams;

/// <summary>
/// What the publish path did with a message: the error, or the sequence (original for a duplicate); whether to answer,
/// the rollup asked for (0 none, 1 subject, 2 all), and whether the message was stored (not refused, a duplicate, or
/// skipped for want of interest).
/// </summary>
internal readonly record struct IngestOutcome(ApiError? Error, ulong Sequence, bool Duplicate, bool Respond, int Rollup, bool Stored = false);

/// <summary>
/// The publish path's checks and the append (nats-server <c>processJetStreamMsg</c>): a message on one of the stream's
/// subjects is checked against its <c>Nats-*</c> headers (expected stream, last sequence, last sequence of its subject,
/// last message id; message id against the <see cref="DuplicateWindow"/>; rollup; 2.11's <c>Nats-TTL</c>) and the limits (message and header
/// size, the server's resources), then appended to the store, and the consumers that want it are told. Holds the
/// stream's last sequence and last message id (nats-server <c>mset.lseq</c>, <c>mset.lmsgId</c>).
/// </summary>
/// <remarks>
/// Not thread-safe: the stream calls <see cref="Append"/> under its gate, which serialises appends as the storage
/// contract expects and makes a configuration change apply between two messages. Allocates nothing for a message
/// without a message id.
/// </remarks>
internal sealed class MessageIngest
{
    private const int MaxHeaderSize = 64 * 1024;

    private readonly IStreamStore store;
    private readonly string name;
    private readonly byte[] nameBytes;
    private readonly ConsumerRegistry consumers;
    private readonly Func<bool> limitsExceeded;
    private readonly Func<bool>? accountLimitsExceeded;
    private readonly ILogger logger;
    private readonly DuplicateWindow window;
    private readonly bool keepsTimestamps;
    private ulong lastSequence;
    private string? lastMessageId;

    // One message the checks load into (expected last subject sequence).
    private StoredMessage? scratchMessage;

    /// <param name="store">The stream's store.</param>
    /// <param name="name">The stream's name, for the log.</param>
    /// <param name="nameBytes">The stream's name, which <c>Nats-Expected-Stream</c> must match.</param>
    /// <param name="consumers">The consumers told about a stored message, and asked for interest.</param>
    /// <param name="limitsExceeded">Whether the server's limit of the stream's medium is reached.</param>
    /// <param name="logger">The JetStream log.</param>
    /// <param name="newStream">True for a new stream, false for one re-opened from its store (its duplicate window is refilled when first needed).</param>
    /// <param name="accountLimitsExceeded">
    /// Whether the account's limits are exceeded once a message is stored; null for an account without limits of its own.
    /// </param>
    /// <param name="keepsTimestamps">Whether the store keeps a given timestamp (<see cref="StoreFeatures.Timestamps"/>); else a mirror's messages take the current time.</param>
    public MessageIngest(IStreamStore store, string name, byte[] nameBytes, ConsumerRegistry consumers, Func<bool> limitsExceeded, ILogger logger, bool newStream, Func<bool>? accountLimitsExceeded = null, bool keepsTimestamps = false)
    {
        this.keepsTimestamps = keepsTimestamps;
        this.accountLimitsExceeded = accountLimitsExceeded;
        this.store = store;
        this.name = name;
        this.nameBytes = nameBytes;
        this.consumers = consumers;
        this.limitsExceeded = limitsExceeded;
        this.logger = logger;
        window = new DuplicateWindow(loaded: newStream);
        lastSequence = store.GetState().LastSequence;
    }

    /// <summary>The sequence of the last message taken in (stored or skipped).</summary>
    public ulong LastSequence => lastSequence;

    /// <summary>Uses up the sequences up to <paramref name="last"/> without storing anything (nats-server <c>skipMsgs</c>, for a mirror).</summary>
    public void SkipTo(ulong last)
    {
        while (lastSequence < last)
        {
            lastSequence = store.Skip();
        }
    }

    /// <summary>
    /// Whether the next append gets <paramref name="last"/> + 1, as a mirror needs its origin's sequence (nats-server
    /// <c>processJetStreamMsg</c>'s <c>lseq</c> check): true when it does, or when the store has never held anything and
    /// is moved on to it.
    /// </summary>
    public bool AlignTo(ulong last)
    {
        if (last == lastSequence)
        {
            return true;
        }

        if (store.GetState().LastSequence != 0)
        {
            return false;
        }

        store.Compact(last + 1);
        lastSequence = last;
        return true;
    }

    /// <summary>Checks a message against <paramref name="config"/> and its headers, and appends it.</summary>
    /// <param name="config">The stream's configuration in force.</param>
    /// <param name="subject">The message's subject.</param>
    /// <param name="headerBlock">The message's header block, contiguous; empty without headers.</param>
    /// <param name="headers">The header block as received, stored as is.</param>
    /// <param name="payload">The payload.</param>
    /// <param name="hasReply">Whether the publisher asked for an acknowledgement.</param>
    /// <param name="sourced">
    /// Whether a mirror or source brought it in: a <c>Nats-TTL</c> is then not refused by a stream without
    /// <c>allow_msg_ttl</c> (which keeps the message without its time to live), as nats-server's <c>sourced</c>.
    /// </param>
    /// <param name="timestamp">The store time to keep (a mirror's origin's, in Unix nanoseconds), or 0 for now.</param>
    public IngestOutcome Append(StreamConfig config, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> headerBlock, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload, bool hasReply, bool sourced = false, long timestamp = 0)
    {
        var rollup = 0;
        var timeToLive = TimeSpan.Zero;
        var timeToLiveInvalid = false;
        string? messageId = null;
        var respond = hasReply && !config.NoAck;
        if (config.Sealed)
        {
            return new IngestOutcome(ApiErrors.StreamSealed, 0, false, respond, 0);
        }

        if (!headerBlock.IsEmpty)
        {
            if (NatsHeaderBlock.TryGetValue(headerBlock, NatsHeaders.ExpectedStream, out var expectedStream) && !expectedStream.SequenceEqual(nameBytes))
            {
                return new IngestOutcome(ApiErrors.StreamNotMatch, 0, false, respond, 0);
            }

            if (NatsHeaderBlock.TryGetValue(headerBlock, MessageTtlHeader.Name, out var ttlValue))
            {
                // nats-server 2.11: refused where TTLs are off, checked for validity just before the store.
                timeToLiveInvalid = !MessageTtlHeader.TryParse(ttlValue, out timeToLive);
                if (timeToLive != TimeSpan.Zero && !sourced && !config.AllowMsgTtl)
                {
                    return new IngestOutcome(ApiErrors.MessageTtlDisabled, 0, false, respond, 0);
                }
            }

            if (NatsHeaderBlock.TryGetValue(headerBlock, NatsHeaders.MsgId, out var id) && !id.IsEmpty)
            {
                window.EnsureLoaded(store, config.DuplicateWindow, lastSequence, ref lastMessageId);
                if (window.Find(id, config.DuplicateWindow) is { } original)
                {
                    return new IngestOutcome(null, original, true, respond, 0);
                }

                messageId = Encoding.UTF8.GetString(id);
            }

            if (NatsHeaders.TryGetUInt64(headerBlock, NatsHeaders.ExpectedLastSubjectSequence, out var expectedSubjectSeq, out var hasSubjectSeq) || hasSubjectSeq)
            {
                var message = scratchMessage ??= new StoredMessage();
                var found = store.LoadLast(subject, message) == LoadStatus.Found ? message.Sequence : 0;
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

            if (NatsHeaderBlock.TryGetValue(headerBlock, NatsHeaders.ExpectedLastMsgId, out var expectedId))
            {
                // After a restart the last id is known once the window is loaded, as nats-server's lmsgId.
                window.EnsureLoaded(store, config.DuplicateWindow, lastSequence, ref lastMessageId);
                if (!expectedId.SequenceEqual(Encoding.UTF8.GetBytes(lastMessageId ?? "")))
                {
                    return new IngestOutcome(ApiErrors.StreamWrongLastMessageId(lastMessageId ?? ""), 0, false, respond, 0);
                }
            }

            if (NatsHeaderBlock.TryGetValue(headerBlock, NatsHeaders.Rollup, out var rollupValue))
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

        if (timeToLiveInvalid)
        {
            return new IngestOutcome(ApiErrors.MessageTtlInvalid, 0, false, respond, 0);
        }

        if (limitsExceeded())
        {
            JetStreamLog.ResourcesExceeded(logger);
            return new IngestOutcome(ApiErrors.InsufficientResources, 0, false, respond, 0);
        }

        if (config.Retention == RetentionPolicy.Interest && !consumers.HasInterestIn(subject))
        {
            // Nobody will ever ask for it: the sequence is used, nothing is kept (nats-server SkipMsg).
            lastSequence = store.Skip();
            lastMessageId = messageId;
            if (messageId is not null)
            {
                window.Remember(messageId, lastSequence, config.DuplicateWindow);
            }

            return new IngestOutcome(null, lastSequence, false, respond, 0);
        }

        // A stream without allow_msg_ttl keeps a sourced message's Nats-TTL as a header only (nats-server's stores
        // track TTLs only when the stream allows them).
        var raised = config.SubjectDeleteMarkerTtl > 0 ? SubjectDeleteMarkers.RaiseTimeToLive(config, headerBlock, ref timeToLive) : null;
        var options = new StoreOptions { Timestamp = keepsTimestamps ? timestamp : 0, TimeToLive = config.AllowMsgTtl ? timeToLive : TimeSpan.Zero };
        var result = store.Store(subject, raised is not null ? new ReadOnlySequence<byte>(raised) : headers, payload, options);
        if (!result.IsStored)
        {
            if (result.Status is StoreStatus.Failed)
            {
                JetStreamLog.StoreFailed(logger, name, result.Status.ToString());
            }

            return new IngestOutcome(ApiErrors.StreamStoreFailed(StoreStatusText(result.Status)), 0, false, respond, 0);
        }

        var sequence = lastSequence = result.Sequence;
        if (accountLimitsExceeded is not null && accountLimitsExceeded())
        {
            // nats-server stores first, then takes the message back out when the account is over its limits; the
            // sequence stays used.
            store.Remove(sequence);
            return new IngestOutcome(ApiErrors.AccountResourcesExceeded, 0, false, respond, 0);
        }

        lastMessageId = messageId;
        if (messageId is not null)
        {
            window.Remember(messageId, sequence, config.DuplicateWindow);
        }

        consumers.OnStored(subject, sequence);
        return new IngestOutcome(null, sequence, false, respond, rollup, Stored: true);
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
}
