using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;
using Broker.TestKit;
using Xunit;

namespace Broker.Core.Tests.Routes;

/// <summary>Tests that count the whole process's allocations: they run alone, with no other test class beside them.</summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class ProcessAllocationTests
{
    public const string Name = "Process allocations";
}

/// <summary>
/// The relay between a route and a spoke's link adds nothing per message to the publish path: three brokers of ours in
/// this process (a spoke, its hub, the hub's cluster member), messages both ways between raw clients.
/// </summary>
[Collection(ProcessAllocationTests.Name)]
public sealed class RouteLeafRelayAllocationTests
{
    [Fact]
    public async Task Relaying_between_a_route_and_a_spoke_allocates_nothing_per_message()
    {
        // All three servers are ours, in this process: what the process allocates over many messages is the spoke's,
        // the hub's (the relay) and the member's paths plus a constant (timers); raw sockets publish and drain, a batch
        // at a time so no output backs up. One object per message would be 24 B or more.
        await using var net = await RouteLeafRelayTests.Topology.StartAsync(ServerKind.Ours, ServerKind.Ours, ServerKind.Ours);
        var up = await AllocatedPerMessageAsync(net.Spoke.ClientUrl, net.Member.ClientUrl, "relay.up", s => net.Spoke.WaitForLinksAsync(1, s));
        var down = await AllocatedPerMessageAsync(net.Member.ClientUrl, net.Spoke.ClientUrl, "relay.down", s => net.Member.WaitForRoutesAsync(1, s));
        Assert.True(up < 4 && down < 4, string.Create(CultureInfo.InvariantCulture, $"spoke to member {up:0.00} B/msg, member to spoke {down:0.00} B/msg"));
    }

    // Publishes batches on one server, drains the subscriber on another, and returns the process's allocations per message.
    private static async Task<double> AllocatedPerMessageAsync(string publisherUrl, string subscriberUrl, string subject, Func<string, Task> interestCrossed)
    {
        using var subscriber = await RawSocketAsync(subscriberUrl);
        await subscriber.SendAsync(Encoding.ASCII.GetBytes($"SUB {subject} 1\r\nPING\r\n"));
        var buffer = new byte[64 * 1024];
        await ReadUntilAsync(subscriber, buffer, "PONG\r\n"u8.ToArray());
        await interestCrossed(subject);
        using var publisher = await RawSocketAsync(publisherUrl);
        const int perBatch = 1000;
        var batch = Encoding.ASCII.GetBytes(string.Concat(Enumerable.Repeat($"PUB {subject} 8\r\n12345678\r\n", perBatch)));
        var perMessage = $"MSG {subject} 1 8\r\n12345678\r\n".Length;
        // The best of three rounds: pools and tiered compilation settle in the first ones; a cost per message stays in all.
        await RunAsync(5);
        const int batches = 20;
        var best = double.MaxValue;
        for (var round = 0; round < 3; round++)
        {
            var before = GC.GetTotalAllocatedBytes(precise: true);
            await RunAsync(batches);
            best = Math.Min(best, (GC.GetTotalAllocatedBytes(precise: true) - before) / (double)(batches * perBatch));
        }

        return best;

        async Task RunAsync(int times)
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
            for (var i = 0; i < times; i++)
            {
                await publisher.SendAsync(batch, timeout.Token);
                await DrainAsync(subscriber, buffer, (long)perBatch * perMessage, timeout.Token);
            }
        }
    }

    private static async Task<Socket> RawSocketAsync(string url)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(IPAddress.Loopback, new Uri(url).Port);
        await ReadUntilAsync(socket, new byte[4096], "\r\n"u8.ToArray());
        await socket.SendAsync("CONNECT {\"verbose\":false}\r\n"u8.ToArray());
        return socket;
    }

    private static async Task ReadUntilAsync(Socket socket, byte[] buffer, byte[] end)
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        var length = 0;
        while (buffer.AsSpan(0, length).IndexOf(end) < 0)
        {
            var read = await socket.ReceiveAsync(buffer.AsMemory(length), timeout.Token);
            Assert.True(read > 0, "the server closed the raw connection");
            length += read;
        }
    }

    private static async Task DrainAsync(Socket socket, byte[] buffer, long total, CancellationToken cancel)
    {
        for (long received = 0; received < total;)
        {
            var read = await socket.ReceiveAsync(buffer.AsMemory(), cancel);
            Assert.True(read > 0, "the server closed the subscriber");
            received += read;
        }
    }
}
