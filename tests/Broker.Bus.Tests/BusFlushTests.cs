using System.Globalization;
using System.Text;
using System.Buffers;
using Broker.Abstractions;

namespace Broker.Bus.Tests;

/// <summary>
/// Clients that batch their publishes: with deferred flushes nothing leaves until the client ends its batch, and then
/// everything does, in order, in one flush per receiving connection.
/// </summary>
public sealed class BusFlushTests
{
    [Fact(Timeout = 60_000)]
    public async Task A_client_deferring_its_flushes_sends_its_batch_when_it_flushes()
    {
        await using var broker = await TestBroker.StartAsync();
        await using var subscriber = await RawClient.ConnectAsync(broker.EndPoint);
        await subscriber.SendAsync("CONNECT {\"verbose\":false}\r\nSUB batched 1\r\n");
        Assert.Equal(["PONG"], (await subscriber.PingAndCollectAsync()).Lines);

        // A delivery loop, as a JetStream consumer's: many publishes, one flush.
        await using var deliverer = broker.Bus.CreateClient(new BusClientOptions { Name = "deliverer", DeferFlush = true });
        for (var i = 0; i < 10; i++)
        {
            deliverer.Publish("batched", Encoding.ASCII.GetBytes(i.ToString(CultureInfo.InvariantCulture)));
        }

        Assert.Null(await subscriber.ReadOtherThanPingAsync(TimeSpan.FromMilliseconds(300)));
        await deliverer.FlushAsync();

        var transcript = await subscriber.PingAndCollectAsync();
        Assert.Equal(Enumerable.Range(0, 10).SelectMany(i => new[] { "MSG batched 1 1", i.ToString(CultureInfo.InvariantCulture) }).Append("PONG"), transcript.Lines);
    }

    [Fact(Timeout = 60_000)]
    public async Task With_deferred_flushes_an_adapters_batch_goes_out_when_it_flushes()
    {
        var (broker, harness) = await AdapterHarness.StartAsync();
        await using var _ = broker;
        await using var subscriber = await RawClient.ConnectAsync(broker.EndPoint);
        await subscriber.SendAsync("CONNECT {\"verbose\":false}\r\nSUB deferred 1\r\n");
        Assert.Equal(["PONG"], (await subscriber.PingAndCollectAsync()).Lines);

        await using var peer = await harness.ConnectAsync(broker);
        await using var adapter = (await peer.ConnectAsync(broker.Bus, o => new() { Protocol = o.Protocol, DeferFlush = true })).Connection!;
        for (var i = 0; i < 10; i++)
        {
            adapter.Publish("deferred", Encoding.ASCII.GetBytes(i.ToString(CultureInfo.InvariantCulture)));
        }

        adapter.WriteOutput(0, static (output, _) => output.Write("ack"u8));

        // Nothing leaves before the adapter ends its batch.
        Assert.Null(await subscriber.ReadOtherThanPingAsync(TimeSpan.FromMilliseconds(300)));
        await adapter.FlushAsync();

        var transcript = await subscriber.PingAndCollectAsync();
        Assert.Equal(Enumerable.Range(0, 10).SelectMany(i => new[] { "MSG deferred 1 1", i.ToString(CultureInfo.InvariantCulture) }).Append("PONG"), transcript.Lines);
        Assert.Equal("ack", Encoding.ASCII.GetString(await peer.ReceiveAsync(3)));
    }
}
