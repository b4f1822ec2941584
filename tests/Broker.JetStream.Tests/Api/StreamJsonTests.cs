using System.Reflection;
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization;
using Broker.Abstractions;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Tests.Api;

/// <summary>
/// The stored stream metadata and stream info are read and written by hand (<see cref="StreamConfigJson"/>,
/// <see cref="StreamInfoJson"/>: a restart without System.Text.Json's property metadata). Both are checked against the
/// serializer context, which requests still use, byte for byte; the full models set every field, so a field added to a
/// model and not to the hand-written code fails here.
/// </summary>
public sealed class StreamJsonTests
{
    private static readonly Type[] Models =
    [
        typeof(StreamConfig), typeof(StreamSourceConfig), typeof(ExternalStreamConfig), typeof(RePublishConfig), typeof(SubjectTransformConfig),
        typeof(StoredStreamMetadata), typeof(StreamInfoModel), typeof(StreamStateModel), typeof(StreamSourceInfoModel), typeof(ApiError), typeof(ApiPaged),
    ];

    public static TheoryData<string> Stored =>
    [
        """{"config":{"name":"R"},"created":"2026-11-28T12:59:47.6623206Z"}""",
        """{"config":{"name":"R","subjects":null,"description":null,"metadata":null,"mirror":null,"sources":null,"placement":null},"created":null}""",
        """{"created":"0001-01-01T00:00:00Z","config":{"name":"R","sources":[null,{"name":"S","subject_transforms":[null]}]}}""",
        """{"config":{"name":"R","unknown":{"a":[1,{"b":null}]},"NAME":"x","name":"last"},"other":[true]}""",
        """{"config":{"name":"R","metadata":{"a":"1","a":"2","b":null},"subjects":["a",null]}}""",
        """{"config":{"name":null,"storage":null,"retention":"interest","discard":"new"}}""",
        """{"config":{"name":"R"}}  """,
        """{"config":null}""",
        "null",
        """{"created":"2026-11-28T12:59:47Z"}""",
        """{"config":{"name":"R","max_msgs":1.5}}""",
        """{"config":{"name":"R","max_msgs":"1"}}""",
        """{"config":{"name":"R","max_consumers":99999999999}}""",
        """{"config":{"name":"R","first_seq":-1}}""",
        """{"config":{"name":"R","sealed":null}}""",
        """{"config":{"name":"R","sealed":1}}""",
        """{"config":{"name":"R","retention":"bogus"}}""",
        """{"config":{"name":"R","retention":null}}""",
        """{"config":{"name":1}}""",
        """{"config":{"name":"R","subjects":"a"}}""",
        """{"config":{"name":"R"},"created":"yesterday"}""",
        """{"config":{"name":"R","mirror":{"name":"M","opt_start_time":null,"external":null}}}""",
        """{"config":{"name":"R"}} x""",
        """{"config":{"name":"R"}}{}""",
        """{"config":{"name":"R",}}""",
        """{"config":{"name":"R" /* c */}}""",
        """{"config":{"name":"R\u0041"}""",
        """[]""",
        "",
    ];

    [Fact]
    public void The_full_models_set_every_field()
    {
        var json = Encoding.UTF8.GetString(JsonSerializer.SerializeToUtf8Bytes(FullInfo(), JetStreamJson.Context.StreamInfoModel))
            + Encoding.UTF8.GetString(JsonSerializer.SerializeToUtf8Bytes(new StoredStreamMetadata { Config = FullConfig() }, JetStreamJson.Context.StoredStreamMetadata))
            + JsonSerializer.Serialize(new ApiPaged(1, 2, 3), JetStreamJson.Context.ApiPaged);
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
    public void Stream_info_is_written_as_the_serializer_writes_it()
    {
        foreach (var info in new[] { FullInfo(), MinimalInfo() })
        {
            var expected = JsonSerializer.SerializeToUtf8Bytes(info, JetStreamJson.Context.StreamInfoModel);
            Assert.Equal(Encoding.UTF8.GetString(expected), Encoding.UTF8.GetString(StreamInfoJson.Write(info)));
        }

        Assert.Equal(JsonSerializer.Serialize(new ApiPaged(12, 3, 256), JetStreamJson.Context.ApiPaged), Encoding.UTF8.GetString(StreamInfoJson.Write(new ApiPaged(12, 3, 256))));
    }

    [Fact]
    public void Stored_metadata_is_written_as_the_serializer_writes_it_and_read_back()
    {
        foreach (var config in new[] { FullConfig(), new StreamConfig { Name = "R" } })
        {
            var metadata = new StoredStreamMetadata { Config = config, Created = 1_764_334_787_662_320_600 };
            var expected = Encoding.UTF8.GetString(JsonSerializer.SerializeToUtf8Bytes(metadata, JetStreamJson.Context.StoredStreamMetadata));
            var written = StreamInfoJson.Write(metadata);
            Assert.Equal(expected, Encoding.UTF8.GetString(written));

            var read = StreamInfoJson.ReadMetadata(written)!;
            Assert.Equal(expected, Encoding.UTF8.GetString(JsonSerializer.SerializeToUtf8Bytes(read, JetStreamJson.Context.StoredStreamMetadata)));
        }
    }

    [Theory]
    [InlineData("ORDERS")]
    [InlineData("a\"b\\c <&> + '\u00e9\u4e2d \u0001\t\n\u2028")]
    [InlineData("")]
    public void A_quoted_name_is_escaped_as_the_serializer_escapes_it(string name) =>
        Assert.Equal(JsonSerializer.Serialize(name, JetStreamJson.Context.String), StreamInfoJson.Quote(name));

    [Theory]
    [MemberData(nameof(Stored))]
    public void Stored_metadata_reads_as_the_serializer_read_it(string json)
    {
        var bytes = Encoding.UTF8.GetBytes(json);
        string? expected;
        try
        {
            var metadata = JsonSerializer.Deserialize(bytes, JetStreamJson.Context.StoredStreamMetadata);
            expected = metadata is null ? "null" : JsonSerializer.Serialize(metadata, JetStreamJson.Context.StoredStreamMetadata);
        }
        catch (JsonException)
        {
            expected = null;
        }

        string? actual;
        try
        {
            var metadata = StreamInfoJson.ReadMetadata(bytes);
            actual = metadata is null ? "null" : JsonSerializer.Serialize(metadata, JetStreamJson.Context.StoredStreamMetadata);
        }
        catch (JsonException)
        {
            actual = null;
        }

        Assert.Equal(expected, actual);
    }

    private static StreamConfig FullConfig() => new()
    {
        Name = "R \"é\" <&> +",
        Description = "d",
        Subjects = ["a.>", "b.*"],
        Retention = RetentionPolicy.WorkQueue,
        MaxConsumers = -1,
        MaxMsgs = long.MaxValue,
        MaxBytes = 1 << 30,
        MaxAge = 3_600_000_000_000,
        MaxMsgsPerSubject = 5,
        MaxMsgSize = 1024,
        Discard = DiscardPolicy.New,
        Storage = "file",
        Replicas = 1,
        NoAck = true,
        TemplateOwner = "T",
        DuplicateWindow = 120_000_000_000,
        Placement = JsonDocument.Parse("""{"cluster":"C","tags":["x", "y"]}""").RootElement,
        Mirror = Source("M"),
        Sources = [Source("S1"), Source("S2")],
        RePublish = new RePublishConfig { Source = ">", Destination = "rp.>", HeadersOnly = true },
        SubjectTransform = new SubjectTransformConfig { Source = "a.>", Destination = "t.>" },
        AllowDirect = true,
        MirrorDirect = true,
        DiscardNewPerSubject = true,
        Sealed = true,
        DenyDelete = true,
        DenyPurge = true,
        AllowRollup = true,
        FirstSeq = ulong.MaxValue,
        Metadata = new() { ["k"] = "v", ["é"] = "\u0001" },
        Compression = "s2",
        ConsumerLimits = JsonDocument.Parse("""{"max_ack_pending":10}""").RootElement,
        AllowMsgTtl = true,
        SubjectDeleteMarkerTtl = 1_000_000_000,
        AllowMsgCounter = true,
        AllowAtomic = true,
        AllowMsgSchedules = true,
        PersistMode = "default",
        AllowBatched = true,
    };

    private static StreamSourceConfig Source(string name) => new()
    {
        Name = name,
        OptStartSeq = 7,
        OptStartTime = 1_764_334_787_000_000_001,
        FilterSubject = "f.>",
        External = new ExternalStreamConfig { Api = "$JS.hub.API", Deliver = "dlv" },
        SubjectTransforms = [new SubjectTransformConfig { Source = "x.>", Destination = "y.>" }],
    };

    private static StreamInfoModel FullInfo() => new()
    {
        Config = FullConfig(),
        Created = 1_764_334_787_662_320_600,
        State = new StreamStateModel
        {
            Messages = 10,
            Bytes = ulong.MaxValue,
            FirstSeq = 1,
            FirstTime = 1_764_334_787_000_000_000,
            LastSeq = 12,
            LastTime = 1_764_334_788_123_456_789,
            NumSubjects = 2,
            Subjects = new() { ["a.1"] = 4, ["a.\"2\""] = 6 },
            NumDeleted = 2,
            Deleted = [3, 9],
            Consumers = 3,
        },
        Domain = "hub",
        Mirror = SourceInfo("M"),
        Sources = [SourceInfo("S1"), SourceInfo("S2")],
    };

    private static StreamInfoModel MinimalInfo() => new() { Config = new StreamConfig { Name = "R", Storage = "file" }, State = new StreamStateModel() };

    private static StreamSourceInfoModel SourceInfo(string name) => new()
    {
        Name = name,
        External = new ExternalStreamConfig { Api = "$JS.hub.API", Deliver = "" },
        Lag = 5,
        Active = -1,
        Error = new ApiError(503, 10_077, "stream \"x\" not found"),
        SubjectTransforms = [new SubjectTransformConfig { Source = "x.>", Destination = "" }],
    };
}
