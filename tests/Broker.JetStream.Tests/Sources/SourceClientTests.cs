using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using static Broker.JetStream.Tests.Sources.SourceTestKit;

namespace Broker.JetStream.Tests.Sources;

/// <summary>
/// Mirrors and sources through NATS.Client.JetStream 3.3.2's own models (<c>StreamConfig.Mirror</c>,
/// <c>Sources</c>, <c>StreamInfo.Mirror</c>), with consumers of the mirror filtering on its origin's subjects, on
/// both servers; a mirror has no subjects, so a publish to its name has no responders.
/// </summary>
public sealed class SourceClientTests
{
    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Kinds), MemberType = typeof(SourceTestKit))]
    public async Task The_client_creates_mirrors_and_sources_and_reads_them(ServerKind kind)
    {
        await using var server = await StartAsync(kind);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var owned = connection;
        await js.CreateStreamAsync(new StreamConfig("O", ["o.>"]) { Storage = StreamConfigStorage.Memory });
        await PublishAsync(js, "o.a", "1");
        await PublishAsync(js, "o.b", "2");
        await PublishAsync(js, "o.a", "3");

        var mirror = await js.CreateStreamAsync(new StreamConfig { Name = "M", Storage = StreamConfigStorage.File, Mirror = new StreamSource { Name = "O" } });
        var sourcing = await js.CreateStreamAsync(new StreamConfig { Name = "S", Storage = StreamConfigStorage.Memory, Sources = [new StreamSource { Name = "O", FilterSubject = "o.b" }] });
        Assert.Equal("O", mirror.Info.Config.Mirror?.Name);
        Assert.Equal("o.b", Assert.Single(sourcing.Info.Config.Sources!).FilterSubject);
        await WaitForMessagesAsync(connection, "M", 3);
        await WaitForMessagesAsync(connection, "S", 1);

        await mirror.RefreshAsync();
        Assert.Equal(("O", 0L), (mirror.Info.Mirror?.Name, mirror.Info.Mirror?.Lag));
        await sourcing.RefreshAsync();
        Assert.Equal("O", Assert.Single(sourcing.Info.Sources!).Name);

        // A consumer of the mirror may filter on the origin's subjects; one outside them is refused as nats-server does.
        var consumer = await js.CreateOrUpdateConsumerAsync("M", new ConsumerConfig("C") { FilterSubject = "o.a", AckPolicy = ConsumerConfigAckPolicy.None });
        var received = new List<string>();
        await foreach (var message in consumer.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = 2, Expires = TimeSpan.FromSeconds(5) }))
        {
            received.Add($"{message.Metadata?.Sequence.Stream} {message.Subject} {message.Data}");
        }

        Assert.Equal(["1 o.a 1", "3 o.a 3"], received);
        var refused = await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.CreateOrUpdateConsumerAsync("M", new ConsumerConfig("D") { FilterSubject = "x.y" }));
        Assert.Equal(10093, refused.Error.ErrCode);

        await Assert.ThrowsAsync<NATS.Client.Core.NatsNoRespondersException>(async () => await connection.RequestAsync<string, string>("M", "to the mirror"));
    }
}
