using Broker.Core;
using Broker.Core.Auth;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Broker.JetStream.Tests;

/// <summary>
/// The account's subject mappings and streams, on our broker and on nats-server 2.9.10 with the same mappings: a
/// publish is mapped before it reaches a stream, so it lands in the stream listening on the mapped subject, stored
/// under it, and not in one listening on the subject published to; a stream's republish goes out as JetStream sends
/// it, unmapped.
/// </summary>
public sealed class StreamMappingTests
{
    private const string Conf = """
        mappings {
          "orders.>": "stored.orders.>"
          "copies.>": "mapped.copies.>"
        }
        """;

    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    private static void Mappings(BrokerOptions options) => options.Mappings =
    [
        new MappingOptions { Source = "orders.>", Destinations = [new MappingDestinationOptions { Subject = "stored.orders.>" }] },
        new MappingOptions { Source = "copies.>", Destinations = [new MappingDestinationOptions { Subject = "mapped.copies.>" }] },
    ];

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task A_mapped_publish_lands_in_the_stream_of_the_mapped_subject_and_a_republish_is_not_mapped(ServerKind kind)
    {
        await using var server = await JetStreamServer.StartAsync(kind, broker: Mappings, referenceConfig: Conf);
        var (connection, js) = await server.ConnectJetStreamAsync();
        await using var _ = connection;
        await js.CreateStreamAsync(new StreamConfig("STORED", ["stored.>"])
        {
            Storage = StreamConfigStorage.Memory,
            Republish = new Republish { Src = "stored.>", Dest = "copies.>" },
        });
        await js.CreateStreamAsync(new StreamConfig("UNMAPPED", ["orders.>"]) { Storage = StreamConfigStorage.Memory });
        await using var copies = await connection.SubscribeCoreAsync<string>("copies.>");
        await using var mapped = await connection.SubscribeCoreAsync<string>("mapped.copies.>");
        await connection.PingAsync();

        var ack = await js.PublishAsync("orders.1", "first");
        ack.EnsureSuccess();
        Assert.Equal(("STORED", 1ul), (ack.Stream, ack.Seq));
        var stored = await (await js.GetStreamAsync("STORED")).GetAsync(new StreamMsgGetRequest { Seq = 1 });
        Assert.Equal("stored.orders.1", stored.Message.Subject);
        Assert.Equal(0L, (await js.GetStreamAsync("UNMAPPED")).Info.State.Messages);

        var copy = await copies.NextAsync();
        Assert.Equal(("copies.orders.1", "first"), (copy.Subject, copy.Data));

        // A core publish to the same subject is mapped; it arrives after the republish on the mapped subscription only.
        await connection.PublishAsync("copies.core", "core");
        var core = await mapped.NextAsync();
        Assert.Equal("mapped.copies.core", core.Subject);
        Assert.True(copies.IsEmpty());
    }
}
