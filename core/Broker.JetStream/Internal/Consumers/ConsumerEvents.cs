using System.Globalization;
using System.Text;
using System.Text.Json;
using Broker.Abstractions;
using Broker.JetStream.Internal.Json;
using Microsoft.Extensions.Logging;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// What a consumer tells the world about its acknowledgements: advisories on
/// <c>$JS.EVENT.ADVISORY.CONSUMER.&lt;kind&gt;.&lt;stream&gt;.&lt;consumer&gt;</c> (a NAK, a TERM, max deliveries reached,
/// a pause or its end),
/// the <c>sample_freq</c> ack metric (nats-server <c>sampleAck</c>) on
/// <c>$JS.EVENT.METRIC.CONSUMER.ACK.&lt;stream&gt;.&lt;consumer&gt;</c>, each queued to the outbox only when someone
/// listens, and the warning for a malformed NAK delay. Called with the consumer's lock held.
/// </summary>
internal sealed class ConsumerEvents(string stream, string consumer, ISubjectInterest? interest, string? domain, ConsumerOutbox outbox, ILogger logger)
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
        var json = Begin("io.nats.jetstream.advisory.v1.consumer_pause", now)
            .Append(",\"paused\":").Append(pauseUntil != 0 && now < pauseUntil ? "true" : "false")
            .Append(",\"pause_until\":\"").Append(GoTime.Format(pauseUntil)).Append('"');
        Queue(subject, json, withDomain: true);
    }

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
        var json = Begin("io.nats.jetstream.metric.v1.consumer_ack", now)
            .Append(",\"consumer_seq\":").Append(consumerSeq)
            .Append(",\"stream_seq\":").Append(streamSeq)
            .Append(",\"ack_time\":").Append(now - deliveredAt)
            .Append(",\"deliveries\":").Append(deliveries);
        Queue(subject, json, withDomain: true);
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

        var json = Begin(type, GoTime.NowNanoseconds());
        if (consumerSeq != 0)
        {
            json.Append(",\"consumer_seq\":").Append(consumerSeq);
        }

        json.Append(",\"stream_seq\":").Append(streamSeq).Append(",\"deliveries\":").Append(deliveries);
        Queue(subject, json, withDomain: false);
    }

    /// <summary>An event's JSON up to its consumer: type, a fresh id, the time, stream and consumer names.</summary>
    private StringBuilder Begin(string type, long now) => new StringBuilder()
        .Append("{\"type\":\"").Append(type).Append("\",\"id\":\"").Append(Guid.NewGuid().ToString("N"))
        .Append("\",\"timestamp\":\"").Append(GoTime.Format(now))
        .Append("\",\"stream\":").Append(JsonSerializer.Serialize(stream, JetStreamJson.Context.String))
        .Append(",\"consumer\":").Append(JsonSerializer.Serialize(consumer, JetStreamJson.Context.String));

    /// <summary>Ends an event's JSON (with the JetStream domain, when asked and set) and queues it for the runner.</summary>
    private void Queue(byte[] subject, StringBuilder json, bool withDomain)
    {
        if (withDomain && !string.IsNullOrEmpty(domain))
        {
            json.Append(",\"domain\":").Append(JsonSerializer.Serialize(domain, JetStreamJson.Context.String));
        }

        outbox.Enqueue(new ControlMessage(subject, null, [], Encoding.UTF8.GetBytes(json.Append('}').ToString())));
    }
}
