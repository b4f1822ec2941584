using System.Reflection;
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization;
using Broker.Abstractions;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Tests.Api;

/// <summary>
/// Consumer info and the stored consumer metadata are written by hand (<see cref="ConsumerJson"/>: a consumer create
/// without System.Text.Json's property metadata), checked against the serializer context byte for byte; the full
/// models set every field, so a field added to a model and not to the hand-written code fails here.
/// </summary>
public sealed class ConsumerJsonTests
{
    private static readonly Type[] Models = [typeof(ConsumerConfig), typeof(ConsumerInfoModel), typeof(SequenceInfo), typeof(PriorityGroupState), typeof(StoredConsumerMetadata)];

    [Fact]
    public void The_full_models_set_every_field()
    {
        var json = Encoding.UTF8.GetString(JsonSerializer.SerializeToUtf8Bytes(FullInfo(), JetStreamJson.Context.ConsumerInfoModel))
            + Encoding.UTF8.GetString(JsonSerializer.SerializeToUtf8Bytes(new StoredConsumerMetadata { Config = FullConfig(), Name = "n" }, JetStreamJson.Context.StoredConsumerMetadata));
        foreach (var model in Models)
        {
            foreach (var property in model.GetProperties())
            {
                if (property.GetCustomAttribute<JsonPropertyNameAttribute>() is { } name)
                {
                    Assert.Contains($"\"{name.Name}\":", json, StringComparison.Ordinal);
                }
            }
        }
    }

    [Fact]
    public void Consumer_info_is_written_as_the_serializer_writes_it()
    {
        foreach (var info in new[] { FullInfo(), MinimalInfo(), new ConsumerInfoModel(), MqttInfo() })
        {
            var expected = JsonSerializer.SerializeToUtf8Bytes(info, JetStreamJson.Context.ConsumerInfoModel);
            Assert.Equal(Encoding.UTF8.GetString(expected), Encoding.UTF8.GetString(ConsumerJson.Write(info)));
        }
    }

    [Fact]
    public void Every_enum_value_is_written_as_the_serializer_writes_it()
    {
        foreach (var deliver in Enum.GetValues<DeliverPolicy>())
        {
            foreach (var ack in Enum.GetValues<ConsumerAckPolicy>())
            {
                foreach (var replay in Enum.GetValues<ReplayPolicy>())
                {
                    foreach (var priority in Enum.GetValues<PriorityPolicy>())
                    {
                        var config = new ConsumerConfig { DeliverPolicy = deliver, AckPolicy = ack, ReplayPolicy = replay, PriorityPolicy = priority };
                        Assert.Equal(JsonSerializer.Serialize(config, JetStreamJson.Context.ConsumerConfig), config.ToJson());
                    }
                }
            }
        }
    }

    [Fact]
    public void Stored_metadata_is_written_as_the_serializer_writes_it_and_read_back()
    {
        foreach (var config in new[] { FullConfig(), new ConsumerConfig(), MqttInfo().Config! })
        {
            var metadata = new StoredConsumerMetadata { Config = config, Name = "C \"1\"", Created = 1_764_334_787_662_320_600 };
            var expected = Encoding.UTF8.GetString(JsonSerializer.SerializeToUtf8Bytes(metadata, JetStreamJson.Context.StoredConsumerMetadata));
            var written = ConsumerJson.Write(metadata);
            Assert.Equal(expected, Encoding.UTF8.GetString(written));

            var read = JsonSerializer.Deserialize(written, JetStreamJson.Context.StoredConsumerMetadata)!;
            Assert.Equal(expected, Encoding.UTF8.GetString(ConsumerJson.Write(read)));
        }
    }

    // The writer and buffer are kept per thread: a write that failed half way, or one that outgrew the kept buffer,
    // leaves nothing in the next.
    [Fact]
    public void A_write_after_a_failed_or_a_large_one_is_still_the_serializers()
    {
        Assert.Throws<JsonException>(() => ConsumerJson.Write(new ConsumerInfoModel { Config = new ConsumerConfig { Durable = "half", DeliverPolicy = (DeliverPolicy)99 } }));
        var large = FullInfo();
        large.Config!.Metadata = Enumerable.Range(0, 2_000).ToDictionary(i => "key" + i, i => new string('v', 40));
        Assert.Equal(Encoding.UTF8.GetString(JsonSerializer.SerializeToUtf8Bytes(large, JetStreamJson.Context.ConsumerInfoModel)), Encoding.UTF8.GetString(ConsumerJson.Write(large)));

        var info = MqttInfo();
        Assert.Equal(Encoding.UTF8.GetString(JsonSerializer.SerializeToUtf8Bytes(info, JetStreamJson.Context.ConsumerInfoModel)), Encoding.UTF8.GetString(ConsumerJson.Write(info)));
        Assert.Equal(JsonSerializer.Serialize(info.Config!, JetStreamJson.Context.ConsumerConfig), info.Config!.ToJson());
    }

    private static ConsumerConfig FullConfig() => new()
    {
        Durable = "D \"é\" <&> +",
        Name = "D",
        Description = "d\u0001",
        DeliverPolicy = DeliverPolicy.ByStartTime,
        OptStartSeq = ulong.MaxValue,
        OptStartTime = 1_764_334_787_000_000_001,
        AckPolicy = ConsumerAckPolicy.All,
        AckWait = 30_000_000_000,
        MaxDeliver = -1,
        BackOff = [1_000_000_000, 2_000_000_000],
        FilterSubject = "f.>",
        ReplayPolicy = ReplayPolicy.Original,
        RateLimit = 1024,
        SampleFrequency = "100%",
        MaxWaiting = 512,
        MaxAckPending = int.MaxValue,
        Heartbeat = 5_000_000_000,
        FlowControl = true,
        HeadersOnly = true,
        MaxRequestBatch = 10,
        MaxRequestExpires = long.MinValue,
        MaxRequestMaxBytes = 4096,
        DeliverSubject = "dlv.\"x\"",
        DeliverGroup = "g",
        InactiveThreshold = 60_000_000_000,
        Replicas = 3,
        MemoryStorage = true,
        Direct = true,
        FilterSubjects = ["a.>", "b.é"],
        Metadata = new() { ["k"] = "v", ["é"] = "\u0001<>" },
        PauseUntil = 1_764_334_788_123_456_789,
        PriorityGroups = ["pg"],
        PriorityPolicy = PriorityPolicy.PinnedClient,
        PriorityTimeout = 120_000_000_000,
    };

    private static ConsumerInfoModel FullInfo() => new()
    {
        Stream = "S \"é\"",
        Name = "D",
        Created = 1_764_334_787_662_320_600,
        Config = FullConfig(),
        Delivered = new SequenceInfo { Consumer = 5, Stream = ulong.MaxValue, LastActive = 1_764_334_787_000_000_000 },
        AckFloor = new SequenceInfo { Consumer = 3, Stream = 9, LastActive = 1 },
        NumAckPending = 2,
        NumRedelivered = -1,
        NumWaiting = 4,
        NumPending = ulong.MaxValue,
        PushBound = true,
        Paused = true,
        PauseRemaining = 1_000_000,
        PriorityGroups = [new PriorityGroupState { Group = "pg", PinnedClientId = "id", PinnedTs = 1_764_334_787_000_000_000 }, new PriorityGroupState()],
    };

    private static ConsumerInfoModel MinimalInfo() => new() { Stream = "S", Name = "C", Config = new ConsumerConfig { Durable = "" }, PriorityGroups = [] };

    // What an MQTT QoS 1 subscription's consumer create answers.
    private static ConsumerInfoModel MqttInfo() => new()
    {
        Stream = "$MQTT_msgs",
        Name = "a1b2_c3",
        Created = 1_764_334_787_662_320_600,
        Config = new ConsumerConfig
        {
            Durable = "a1b2_c3",
            Name = "a1b2_c3",
            DeliverPolicy = DeliverPolicy.New,
            AckPolicy = ConsumerAckPolicy.Explicit,
            AckWait = 30_000_000_000,
            MaxDeliver = -1,
            FilterSubject = "$MQTT.msgs.sessions.1",
            MaxAckPending = 1024,
            DeliverSubject = "$MQTT.sub.c3",
            InactiveThreshold = 0,
        },
    };
}
