using System.Buffers;
using System.Globalization;
using System.Text;
using System.Text.Json;
using Broker.Abstractions;
using Broker.JetStream.Internal.Events;
using Broker.JetStream.Internal.Json;
using Microsoft.Extensions.Logging;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// What a consumer tells the world about its acknowledgements: advisories on
/// <c>$JS.EVENT.ADVISORY.CONSUMER.&lt;kind&gt;.&lt;stream&gt;.&lt;consumer&gt;</c> (a NAK, a TERM, max deliveries reached,
/// a pause or its end, a priority group's pin given or taken: 2.11),
/// the <c>sample_freq</c> ack metric (nats-server <c>sampleAck</c>) on
/// <c>$JS.EVENT.METRIC.CONSUMER.ACK.&lt;stream&gt;.&lt;consumer&gt;</c>, each queued to the outbox only when someone
/// listens, and the warning for a malformed NAK delay. Called with the consumer's lock held.
/// </summary>
internal sealed class ConsumerEvents(string stream, string consumer, ISubjectInterest? interest, string? domain, ConsumerOutbox outbox, ILogger logger, string account)
{
    public void Naked(ulong streamSeq, ulong consumerSeq, ulong deliveries) =>
        Advise("MSG_NAKED", "io.nats.jetstream.advisory.v1.nak", streamSeq, consumerSeq, deliveries);

    public void Terminated(ulong streamSeq, ulong consumerSeq, ulong deliveries) =>
        Advise("MSG_TERMINATED", "io.nats.jetstream.advisory.v1.terminated", streamSeq, consumerSeq, deliveries);

    public void MaxDeliveries(ulong streamSeq, ulong deliveries) =>
        Advise("MAX_DELIVERIES", "io.nats.jetstream.advisory.v1.max_deliver", streamSeq, 0, deliveries);

    /// <summary>
    /// 2.11 <c>CONSUMER.PAUSE</c> advisory (<c>sendPauseAdvisoryLocked</c>): whether paused now and the deadline (Go's
    /// zero time when none), queued only when someone listens.
    /// </summary>
    public void Paused(long pauseUntil)
    {
        if (Open("ADVISORY.CONSUMER.PAUSE", "io.nats.jetstream.advisory.v1.consumer_pause") is not { } draft)
        {
            return;
        }

        var now = GoTime.NowNanoseconds();
        var writer = draft.Writer;
        writer.WriteString("stream", stream);
        writer.WriteString("consumer", consumer);
        writer.WriteBoolean("paused", pauseUntil != 0 && now < pauseUntil);
        writer.WriteString("pause_until", GoTime.Format(pauseUntil));
        Queue(draft);
    }

    /// <summary>2.11 <c>CONSUMER.PINNED</c> (<c>sendPinnedAdvisoryLocked</c>): the group's requests now go to <paramref name="pinId"/>.</summary>
    public void GroupPinned(string group, string pinId) =>
        GroupAdvisory("PINNED", "io.nats.jetstream.advisory.v1.consumer_group_pinned", group, "pinned_id", pinId);

    /// <summary>2.11 <c>CONSUMER.UNPINNED</c> (<c>sendUnpinnedAdvisoryLocked</c>): the pin ended, <paramref name="reason"/> <c>admin</c> or <c>timeout</c>.</summary>
    public void GroupUnpinned(string group, string reason) =>
        GroupAdvisory("UNPINNED", "io.nats.jetstream.advisory.v1.consumer_group_unpinned", group, "reason", reason);

    public void BadNakDelay(string text) => JetStreamLog.BadNakDelay(logger, stream, consumer, text);

    /// <summary>Queues an ack metric if this ack is sampled (<paramref name="sampleFrequency"/>) and someone listens; true when queued.</summary>
    public bool SampleAck(string? sampleFrequency, ulong streamSeq, ulong consumerSeq, ulong deliveries, long deliveredAt)
    {
        if (!ShouldSample(sampleFrequency) || Open("METRIC.CONSUMER.ACK", "io.nats.jetstream.metric.v1.consumer_ack") is not { } draft)
        {
            return false;
        }

        var now = GoTime.NowNanoseconds();
        var writer = draft.Writer;
        writer.WriteString("stream", stream);
        writer.WriteString("consumer", consumer);
        writer.WriteNumber("consumer_seq", consumerSeq);
        writer.WriteNumber("stream_seq", streamSeq);
        writer.WriteNumber("ack_time", now - deliveredAt);
        writer.WriteNumber("deliveries", deliveries);
        Queue(draft);
        return true;
    }

    /// <summary>nats-server <c>shouldSample</c>: never at 0, always from 100, else a random draw (0-99 at or below it).</summary>
    public static bool ShouldSample(string? sampleFrequency)
    {
        if (string.IsNullOrEmpty(sampleFrequency)
            || !int.TryParse(sampleFrequency.TrimEnd('%'), NumberStyles.Integer, CultureInfo.InvariantCulture, out var frequency)
            || frequency <= 0)
        {
            return false;
        }

        return frequency >= 100 || Random.Shared.Next(100) <= frequency;
    }

    private void Advise(string kind, string type, ulong streamSeq, ulong consumerSeq, ulong deliveries)
    {
        if (Open("ADVISORY.CONSUMER." + kind, type) is not { } draft)
        {
            return;
        }

        var writer = draft.Writer;
        writer.WriteString("stream", stream);
        writer.WriteString("consumer", consumer);
        if (consumerSeq != 0)
        {
            writer.WriteNumber("consumer_seq", consumerSeq);
        }

        writer.WriteNumber("stream_seq", streamSeq);
        writer.WriteNumber("deliveries", deliveries);
        Queue(draft);
    }

    /// <summary>The group advisories, whose structs put <c>domain</c> before the group (not last, as the others do).</summary>
    private void GroupAdvisory(string kind, string type, string group, string key, string value)
    {
        if (Open("ADVISORY.CONSUMER." + kind, type) is not { } draft)
        {
            return;
        }

        var writer = draft.Writer;
        writer.WriteString("account", account);
        writer.WriteString("stream", stream);
        writer.WriteString("consumer", consumer);
        if (!string.IsNullOrEmpty(domain))
        {
            writer.WriteString("domain", domain);
        }

        writer.WriteString("group", group);
        writer.WriteString(key, value);
        Queue(draft, domainLast: false);
    }

    /// <summary>
    /// Starts an event on <c>$JS.EVENT.&lt;kind&gt;.&lt;stream&gt;.&lt;consumer&gt;</c> when someone listens there (one
    /// lookup), with its type, id and timestamp written; null when nobody does.
    /// </summary>
    private Draft? Open(string kind, string type)
    {
        var subject = Encoding.UTF8.GetBytes($"$JS.EVENT.{kind}.{stream}.{consumer}");
        if (interest?.HasInterest(subject) == false)
        {
            return null;
        }

        var buffer = new ArrayBufferWriter<byte>(256);
        return new Draft(subject, buffer, AdvisoryJson.Begin(buffer, type));
    }

    /// <summary>Closes the event (with <c>domain</c> last unless written already) and queues it to the outbox.</summary>
    private void Queue(Draft draft, bool domainLast = true) =>
        outbox.Enqueue(new ControlMessage(draft.Subject, null, [], AdvisoryJson.End(draft.Writer, draft.Buffer, domainLast ? domain : null)));

    /// <summary>An event being written.</summary>
    private readonly record struct Draft(byte[] Subject, ArrayBufferWriter<byte> Buffer, Utf8JsonWriter Writer);
}
