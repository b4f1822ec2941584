using System.Globalization;
using System.Text;
using System.Text.Json;
using Broker.JetStream.Internal.Json;

namespace Broker.JetStream.Internal.Consumers;

/// <summary>
/// <c>sample_freq</c> (nats-server <c>sampleAck</c>): a share of explicit acknowledgements, given in percent, is
/// published as an <c>io.nats.jetstream.metric.v1.consumer_ack</c> event on
/// <c>$JS.EVENT.METRIC.CONSUMER.ACK.&lt;stream&gt;.&lt;consumer&gt;</c> with how long the ack took.
/// </summary>
internal sealed partial class Consumer
{
    /// <summary>Queues an ack metric if this ack is sampled and someone listens; true when queued. Lock held.</summary>
    private bool SampleAck(ulong streamSeq, ulong consumerSeq, ulong deliveries, long deliveredAt)
    {
        if (!ShouldSample())
        {
            return false;
        }

        var subject = Encoding.UTF8.GetBytes($"$JS.EVENT.METRIC.CONSUMER.ACK.{stream.Name}.{Name}");
        if (engine.Interest?.HasInterest(subject) == false)
        {
            return false;
        }

        var now = GoTime.NowNanoseconds();
        var json = new StringBuilder();
        json.Append("{\"type\":\"io.nats.jetstream.metric.v1.consumer_ack\",\"id\":\"").Append(Guid.NewGuid().ToString("N"))
            .Append("\",\"timestamp\":\"").Append(GoTime.Format(now))
            .Append("\",\"stream\":").Append(JsonSerializer.Serialize(stream.Name, JetStreamJson.Context.String))
            .Append(",\"consumer\":").Append(JsonSerializer.Serialize(Name, JetStreamJson.Context.String))
            .Append(",\"consumer_seq\":").Append(consumerSeq)
            .Append(",\"stream_seq\":").Append(streamSeq)
            .Append(",\"ack_time\":").Append(now - deliveredAt)
            .Append(",\"deliveries\":").Append(deliveries);
        if (!string.IsNullOrEmpty(engine.Options.Domain))
        {
            json.Append(",\"domain\":").Append(JsonSerializer.Serialize(engine.Options.Domain, JetStreamJson.Context.String));
        }

        outbox.Enqueue(new Outgoing(subject, null, [], Encoding.UTF8.GetBytes(json.Append('}').ToString())));
        return true;
    }

    /// <summary>nats-server <c>shouldSample</c>: never at 0, always from 100, else a random draw (0-99 at or below it).</summary>
    private bool ShouldSample()
    {
        if (string.IsNullOrEmpty(config.SampleFrequency)
            || !int.TryParse(config.SampleFrequency.TrimEnd('%'), NumberStyles.Integer, CultureInfo.InvariantCulture, out var frequency)
            || frequency <= 0)
        {
            return false;
        }

        return frequency >= 100 || Random.Shared.Next(100) <= frequency;
    }
}
