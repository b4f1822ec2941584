using System.Buffers;
using System.Collections.Concurrent;
using System.Globalization;
using System.Text;
using Broker.Abstractions;
using NATS.Client.Core;

namespace Broker.Bus.Tests;

/// <summary>
/// Deliveries into an adapter's connection: encoded into its output on the producer's thread and flushed once per
/// producer batch; the adapter's own writes never interleave with them; max_pending, the slow-consumer close and the fast-producer stall, so one stalled connection never slows
/// or starves the others.
/// </summary>
public sealed class BusConnectionOutputTests
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(20);

    [Fact(Timeout = 60_000)]
    public async Task Deliveries_of_one_producer_batch_are_written_into_the_output_and_flushed_once()
    {
        const int Messages = 200;
        var (broker, harness) = await AdapterHarness.StartAsync();
        await using var _ = broker;
        await using var peer = await harness.ConnectAsync(broker);
        var transport = new CountingTransport(peer.Connection.Transport);
        peer.Connection.Transport = transport;
        await using var adapter = (await peer.ConnectAsync(broker.Bus)).Connection!;
        using var subscription = adapter.Subscribe("batch.*", null, static (in BusMessage m, IBufferWriter<byte> output) => output.Write(m.Payload.FirstSpan[..1]));

        // All the PUBs in one write: the NATS connection's read loop routes them as one batch (or a few, as TCP
        // delivers them), and ends each batch with one flush per receiving connection.
        await using var publisher = await RawClient.ConnectAsync(broker.EndPoint);
        var pubs = new StringBuilder("CONNECT {\"verbose\":false}\r\n");
        for (var i = 0; i < Messages; i++)
        {
            pubs.Append(CultureInfo.InvariantCulture, $"PUB batch.{i % 7} 1\r\n{i % 10}\r\n");
        }

        await publisher.SendAsync(pubs.ToString());
        var received = await peer.ReceiveAsync(Messages);

        Assert.Equal(Enumerable.Range(0, Messages).Select(i => (byte)('0' + (i % 10))), received);
        Assert.InRange(transport.Flushes, 1, Messages / 10);
    }

    [Fact(Timeout = 60_000)]
    public async Task The_adapters_own_writes_never_interleave_with_deliveries()
    {
        const int Each = 500;
        var (broker, harness) = await AdapterHarness.StartAsync();
        await using var _ = broker;
        await using var peer = await harness.ConnectAsync(broker);
        await using var adapter = (await peer.ConnectAsync(broker.Bus)).Connection!;

        // 8-byte frames: 'D' + delivered payload, 'A' + the adapter's own counter.
        using var subscription = adapter.Subscribe("frames", null, static (in BusMessage m, IBufferWriter<byte> output) =>
        {
            var span = output.GetSpan(8);
            span[0] = (byte)'D';
            m.Payload.CopyTo(span[1..]);
            output.Advance(8);
        });

        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        var deliveries = Task.Run(async () =>
        {
            for (var i = 0; i < Each; i++)
            {
                await nats.PublishAsync("frames", Encoding.ASCII.GetBytes(i.ToString("D7", CultureInfo.InvariantCulture)));
            }

            await nats.PingAsync();
        });
        var own = Task.Factory.StartNew(
            () =>
            {
                for (var i = 0; i < Each; i++)
                {
                    adapter.WriteOutput(i, static (output, n) => output.Write(Encoding.ASCII.GetBytes("A" + n.ToString("D7", CultureInfo.InvariantCulture))));
                }
            },
            TaskCreationOptions.LongRunning);
        await Task.WhenAll(deliveries, own);

        var bytes = await peer.ReceiveAsync(2 * Each * 8);
        var frames = Enumerable.Range(0, 2 * Each).Select(i => Encoding.ASCII.GetString(bytes, i * 8, 8)).ToList();
        Assert.Equal(Enumerable.Range(0, Each).Select(i => "D" + i.ToString("D7", CultureInfo.InvariantCulture)), frames.Where(f => f[0] == 'D'));
        Assert.Equal(Enumerable.Range(0, Each).Select(i => "A" + i.ToString("D7", CultureInfo.InvariantCulture)), frames.Where(f => f[0] == 'A'));
    }

    [Fact(Timeout = 60_000)]
    public async Task An_output_handler_may_not_call_the_bus_and_one_that_writes_nothing_sends_nothing()
    {
        var (broker, harness) = await AdapterHarness.StartAsync();
        await using var _ = broker;
        await using var peer = await harness.ConnectAsync(broker);
        await using var adapter = (await peer.ConnectAsync(broker.Bus)).Connection!;
        var refused = new ConcurrentQueue<Exception>();
        using var subscription = adapter.Subscribe("out.*", null, (in BusMessage m, IBufferWriter<byte> output) =>
        {
            try
            {
                adapter.Publish("elsewhere", "x"u8.ToArray());
            }
            catch (InvalidOperationException ex)
            {
                refused.Enqueue(ex);
            }

            // Skips "out.skip" (as MQTT's no-local would), writes the rest.
            if (m.Subject[^1] != (byte)'p')
            {
                output.Write(m.Subject);
            }
        });

        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        await nats.PublishAsync("out.skip", "1");
        await nats.PublishAsync("out.send", "2");
        await nats.PingAsync();

        Assert.Equal("out.send", Encoding.ASCII.GetString(await peer.ReceiveAsync(8)));
        Assert.Equal(2, refused.Count);
        var info = (await MonitorHttp.ConnectionAsync(broker, adapter.ConnectionId))!.Value;
        Assert.Equal(1, info.GetProperty("out_msgs").GetInt64());
    }

    [Fact(Timeout = 120_000)]
    public async Task A_connection_that_stops_reading_is_closed_as_a_slow_consumer_and_the_others_get_everything()
    {
        const int MaxPending = 256 * 1024;
        var (broker, harness) = await AdapterHarness.StartAsync(o =>
        {
            o.MaxPending = MaxPending;
            o.MaxPayload = 64 * 1024;
        });
        await using var _ = broker;

        // The stalled adapter connection: its peer never reads.
        await using var peer = await harness.ConnectAsync(broker);
        var stalled = (await peer.ConnectAsync(broker.Bus, o => new() { Protocol = "mqtt", Name = "stalled" })).Connection!;
        using var subscription = stalled.Subscribe("flood", null, static (in BusMessage m, IBufferWriter<byte> output) =>
        {
            foreach (var segment in m.Payload)
            {
                output.Write(segment.Span);
            }
        });

        // Another consumer of the same messages, which keeps up.
        await using var other = broker.Bus.CreateClient(new BusClientOptions { Name = "other" });
        var otherReceived = 0L;
        using var keepingUp = other.Subscribe("flood", null, (in BusMessage _) => Interlocked.Increment(ref otherReceived));

        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url, Name = "producer" });
        var payload = new byte[16 * 1024];
        var published = 0L;
        while (!stalled.Closed.IsCancellationRequested && published < 20_000)
        {
            await nats.PublishAsync("flood", payload);
            published++;
        }

        await nats.PingAsync();
        Assert.True(stalled.Closed.IsCancellationRequested, $"no slow consumer after {published} messages");
        Assert.Equal("Slow Consumer (Pending Bytes)", stalled.CloseReason);
        Assert.True(await Eventually.TrueAsync(() => Interlocked.Read(ref otherReceived) == published, Wait), $"the other consumer got {otherReceived} of {published}");

        var varz = await MonitorHttp.GetJsonAsync(broker, "/varz");
        Assert.Equal(1, varz.GetProperty("slow_consumers").GetInt64());
        var closed = (await MonitorHttp.ConnectionAsync(broker, stalled.ConnectionId, "&state=closed"))!.Value;
        Assert.Equal("Slow Consumer (Pending Bytes)", closed.GetProperty("reason").GetString());
        Assert.Equal("stalled", closed.GetProperty("mqtt_client").GetString());
        Assert.True(broker.Logs.Contains("slow consumer detected"));
        Assert.Throws<ObjectDisposedException>(() => stalled.Publish("x", "y"u8.ToArray()));
    }
}
