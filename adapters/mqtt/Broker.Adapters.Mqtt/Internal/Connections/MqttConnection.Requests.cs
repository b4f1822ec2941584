using Broker.Adapters.Mqtt.Internal.Topics;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>MQTT 5 response topics as NATS reply subjects.</summary>
internal sealed partial class MqttConnection
{
    private byte[] replyBuffer = new byte[128];
    private RequestRelay? relay;

    /// <summary>
    /// The reply subject of a request: the response topic's subject, or with correlation data a relay subject of this
    /// connection (see <see cref="RequestRelay"/>). Empty when the response topic cannot be a subject.
    /// </summary>
    private ReadOnlySpan<byte> ReplySubject(ReadOnlySpan<byte> responseTopic, ReadOnlySpan<byte> correlation)
    {
        var needed = TopicMapper.MaxSubjectLength(responseTopic.Length);
        if (replyBuffer.Length < needed)
        {
            replyBuffer = new byte[needed];
        }

        if (TopicMapper.ToSubject(responseTopic, filter: false, replyBuffer, out var written) != TopicStatus.Ok)
        {
            return default;
        }

        var subject = replyBuffer.AsSpan(0, written);
        if (correlation.IsEmpty)
        {
            return subject;
        }

        relay ??= new RequestRelay(bus!);
        return relay.Register(subject, correlation);
    }
}
