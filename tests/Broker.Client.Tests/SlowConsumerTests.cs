using System.Buffers.Binary;

namespace Broker.Client.Tests;

/// <summary>
/// A subscriber that stops reading its socket must cost only itself: the broker closes it as a slow consumer
/// (without -ERR, as nats-server) while healthy subscribers of the same messages get every one, in order. Both
/// ways of detecting it: more than max_pending buffered, and a socket write blocked past the write deadline.
/// </summary>
public sealed class SlowConsumerTests
{
    public static TheoryData<string> Limits => new() { "Pending Bytes", "Write Deadline" };

    [Theory(Timeout = 120_000)]
    [MemberData(nameof(Limits))]
    public async Task Stalled_subscriber_is_closed_and_healthy_subscribers_get_every_message_in_order(string limit)
    {
        // 20 MiB in all, far past what the stalled socket's kernel buffers (a few MiB on loopback) and max_pending
        // hold. It goes out in batches of 512 KiB, each sent only once both healthy subscribers have read the one
        // before: their backlog stays under max_pending however slow this machine is, so only the stalled
        // subscriber can overflow, and the burst can only finish if the stalled one never holds up the others.
        const int count = 2560;
        const int batch = 64;
        const int size = 8 * 1024;
        await using var broker = await TestBroker.StartAsync(o =>
        {
            o.MaxPayload = 64 * 1024;
            if (limit == "Pending Bytes")
            {
                o.MaxPending = 1024 * 1024;
            }
            else
            {
                // The default 64 MiB max_pending is never reached; the blocked write is what gives it away.
                o.WriteDeadline = TimeSpan.FromMilliseconds(500);
            }
        });

        await using var stalled = await RawClient.ConnectAsync(broker.EndPoint);
        await stalled.SendAsync("CONNECT {\"verbose\":false,\"name\":\"stalled\"}\r\nSUB burst 1\r\n");
        Assert.Equal(["PONG"], (await stalled.PingAndCollectAsync()).Lines);

        // From here the raw client reads nothing until the burst is over.
        await using var healthyA = await NatsClients.ConnectAsync(broker.Url, "healthy-a");
        await using var healthyB = await NatsClients.ConnectAsync(broker.Url, "healthy-b");
        var eventsA = ClientEvents.Watch(healthyA);
        var eventsB = ClientEvents.Watch(healthyB);
        await using var subA = await healthyA.SubscribeCoreAsync<byte[]>("burst");
        await using var subB = await healthyB.SubscribeCoreAsync<byte[]>("burst");
        await healthyA.PingAsync();
        await healthyB.PingAsync();

        await using var publisher = await NatsClients.ConnectAsync(broker.Url, "publisher");
        var publisherEvents = ClientEvents.Watch(publisher);
        var payload = new byte[size];
        for (var start = 0; start < count; start += batch)
        {
            for (var i = start; i < start + batch; i++)
            {
                BinaryPrimitives.WriteInt32BigEndian(payload, i);
                await publisher.PublishAsync("burst", payload);
            }

            await publisher.PingAsync();
            foreach (var sub in new[] { subA, subB })
            {
                for (var i = start; i < start + batch; i++)
                {
                    var data = (await sub.NextAsync()).Data!;
                    Assert.Equal(size, data.Length);
                    Assert.Equal(i, BinaryPrimitives.ReadInt32BigEndian(data));
                }
            }
        }

        Assert.True(
            await Eventually.TrueAsync(() => broker.Logs.Contains("slow consumer detected")),
            "no slow consumer logged; log: " + string.Join(Environment.NewLine, broker.Logs.Entries));
        var slow = Assert.Single(broker.Logs.Entries, e => e.Message.Contains("slow consumer detected", StringComparison.Ordinal));
        var clientId = System.Text.Json.JsonDocument.Parse(stalled.Info!["INFO ".Length..]).RootElement.GetProperty("client_id").GetInt64();
        Assert.StartsWith($"cid:{clientId} ", slow.Message, StringComparison.Ordinal);
        Assert.EndsWith($"Slow Consumer ({limit})", slow.Message, StringComparison.Ordinal);
        Assert.Equal(Microsoft.Extensions.Logging.LogLevel.Warning, slow.Level);

        // Now read: whatever was still buffered for it arrives, then the close, and never an -ERR.
        var lines = await stalled.ExpectClosedAsync(TimeSpan.FromSeconds(30));
        Assert.DoesNotContain(lines, l => l.StartsWith("-ERR", StringComparison.Ordinal));

        Assert.False(eventsA.Disconnected.IsCompleted);
        Assert.False(eventsB.Disconnected.IsCompleted);
        Assert.False(publisherEvents.Disconnected.IsCompleted);
        Assert.Empty(eventsA.ClientProblems);
        Assert.Empty(eventsB.ClientProblems);
        Assert.Empty(eventsA.ServerErrors);
        Assert.Empty(eventsB.ServerErrors);
    }
}
