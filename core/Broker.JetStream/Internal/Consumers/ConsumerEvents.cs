using System.Buffers;
using System.Globalization;
using System.Text;
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
        var subject = Encoding.UTF8.GetBytes($"$JS.EVENT.ADVISORY.CONSUMER.PAUSE.{stream}.{consumer}");
        if (interest?.HasInterest(subject) == false)
        {
            return;
        }

        var now = GoTime.NowNanoseconds();
        var buffer = new ArrayBufferWriter<byte>(256);
        var writer = AdvisoryJson.Begin(buffer, "io.nats.jetstream.advisory.v1.consumer_pause");
        writer.WriteString("stream", stream);
        writer.WriteString("consumer", consumer);
        writer.WriteBoolean("paused", pauseUntil != 0 && now < pauseUntil);
        writer.WriteString("pause_until", GoTime.Format(pauseUntil));
        outbox.Enqueue(new ControlMessage(subject, null, [], AdvisoryJson.End(writer, buffer, domain)));
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
        if (!ShouldSample(sampleFrequency))
        {
            return false;
        }

        var subject = Encoding.UTF8.GetBytes($"$JS.EVENT.METRIC.CONSUMER.ACK.{stream}.{consumer}");
        if (interest?.HasInterest(subject) == false)
        {
            return false;
        }

        var now = GoTime.NowNanoseconds();
        var buffer = new ArrayBufferWriter<byte>(256);
        var writer = AdvisoryJson.Begin(buffer, "io.nats.jetstream.metric.v1.consumer_ack");
        writer.WriteString("stream", stream);
        writer.WriteString("consumer", consumer);
        writer.WriteNumber("consumer_seq", consumerSeq);
        writer.WriteNumber("stream_seq", streamSeq);
        writer.WriteNumber("ack_time", now - deliveredAt);
        writer.WriteNumber("deliveries", deliveries);
        outbox.Enqueue(new ControlMessage(subject, null, [], AdvisoryJson.End(writer, buffer, domain)));
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
        var subject = Encoding.UTF8.GetBytes($"$JS.EVENT.ADVISORY.CONSUMER.{kind}.{stream}.{consumer}");
        if (interest?.HasInterest(subject) == false)
        {
            return;
        }

        var buffer = new ArrayBufferWriter<byte>(256);
        var writer = AdvisoryJson.Begin(buffer, type);
        writer.WriteString("stream", stream);
        writer.WriteString("consumer", consumer);
        if (consumerSeq != 0)
        {
            writer.WriteNumber("consumer_seq", consumerSeq);
        }

        writer.WriteNumber("stream_seq", streamSeq);
        writer.WriteNumber("deliveries", deliveries);
        outbox.Enqueue(new ControlMessage(subject, null, [], AdvisoryJson.End(writer, buffer, domain)));
    }

    /// <summary>The group advisories, whose structs put <c>domain</c> before the group (not last, as the others do).</summary>
    private void GroupAdvisory(string kind, string type, string group, string key, string value)
    {
        var subject = Encoding.UTF8.GetBytes($"$JS.EVENT.ADVISORY.CONSUMER.{kind}.{stream}.{consumer}");
        if (interest?.HasInterest(subject) == false)
        {
            return;
        }

        var buffer = new ArrayBufferWriter<byte>(256);
        var writer = AdvisoryJson.Begin(buffer, type);
        writer.WriteString("account", account);
        writer.WriteString("stream", stream);
        writer.WriteString("consumer", consumer);
        if (!string.IsNullOrEmpty(domain))
        {
            writer.WriteString("domain", domain);
        }

        writer.WriteString("group", group);
        writer.WriteString(key, value);
        outbox.Enqueue(new ControlMessage(subject, null, [], AdvisoryJson.End(writer, buffer, domain: null)));
    }
}
