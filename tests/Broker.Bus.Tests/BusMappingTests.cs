using System.Buffers;
using System.Text;
using System.Threading.Channels;
using Broker.Abstractions;
using Broker.Core;
using Broker.Core.Auth;
using NATS.Client.Core;

namespace Broker.Bus.Tests;

/// <summary>
/// Subject mappings for in-process clients: a bus client's publish is mapped in its own account as a NATS client's is;
/// a delivery as another subject (<see cref="IDeliverAsPublisher"/>, JetStream's stored messages) is not, as nats-server
/// does not map its internal clients.
/// </summary>
public sealed class BusMappingTests
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(10);

    private static MappingOptions Mapping(string source, string destination) => new()
    {
        Source = source,
        Destinations = [new MappingDestinationOptions { Subject = destination }],
    };

    [Fact(Timeout = 30_000)]
    public async Task A_bus_clients_publish_is_mapped_in_its_account_and_a_delivery_as_another_subject_is_not()
    {
        await using var broker = await TestBroker.StartAsync(o =>
        {
            o.Mappings = [Mapping("in.*", "out.$1")];
            o.Accounts = [new AccountOptions { Name = "A", Mappings = [Mapping("in.*", "a.$1")] }];
        });
        await using var global = broker.Bus.CreateClient();
        await using var a = broker.Bus.CreateClient(new BusClientOptions { Account = "A" });
        var inGlobal = Channel.CreateUnbounded<string>();
        var inA = Channel.CreateUnbounded<string>();
        using var subGlobal = global.Subscribe(">", null, (in BusMessage m) => inGlobal.Writer.TryWrite(Encoding.UTF8.GetString(m.Subject)));
        using var subA = a.Subscribe(">", null, (in BusMessage m) => inA.Writer.TryWrite(Encoding.UTF8.GetString(m.Subject)));

        global.Publish("in.1"u8, default, default, ReadOnlySequence<byte>.Empty);
        a.Publish("in.2"u8, default, default, ReadOnlySequence<byte>.Empty);
        ((IDeliverAsPublisher)global).Publish("in.3"u8, "stored.3"u8, default, default, ReadOnlySequence<byte>.Empty);

        Assert.Equal("out.1", await ReadAsync(inGlobal));
        Assert.Equal("a.2", await ReadAsync(inA));
        Assert.Equal("stored.3", await ReadAsync(inGlobal));

        // A NATS client of $G sees the bus client's mapped publish too.
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        await using var natsSub = await nats.SubscribeCoreAsync<string>("out.>");
        await nats.PingAsync();
        global.Publish("in.4"u8, default, default, ReadOnlySequence<byte>.Empty);
        using var timeout = new CancellationTokenSource(Wait);
        Assert.Equal("out.4", (await natsSub.Msgs.ReadAsync(timeout.Token)).Subject);
    }

    private static async Task<string> ReadAsync(Channel<string> channel)
    {
        using var timeout = new CancellationTokenSource(Wait);
        return await channel.Reader.ReadAsync(timeout.Token);
    }
}
