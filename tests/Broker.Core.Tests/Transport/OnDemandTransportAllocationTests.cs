using System.Globalization;
using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using Broker.Abstractions;
using Broker.Core.Internal.Transport;
using Broker.Core.Tests.Routes;

namespace Broker.Core.Tests.Transport;

/// <summary>
/// An on-demand connection's reads and sends allocate nothing per message (on Linux through the epoll set: a receive's
/// wait, its readiness hand-off to the pool, a send). Counts the whole process's allocations, so it runs alone.
/// </summary>
[Collection(ProcessAllocationTests.Name)]
public sealed class OnDemandTransportAllocationTests
{
    [Fact(Timeout = 60_000)]
    public async Task Reads_and_sends_of_an_on_demand_connection_allocate_nothing_per_message()
    {
        // Connected and accepted synchronously: the peer's blocking calls below then make no waits of the runtime's
        // (a socket that ever made an asynchronous call emulates blocking with an allocation per wait).
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(1);
        var peer = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        peer.Connect(listener.LocalEndPoint!);
        var connection = new SocketConnection(listener.Accept(), new TransportSettings(), owner: null, PipeScheduler.ThreadPool);
        connection.Start();
        await using var _ = connection;
        using var __ = peer;
        Assert.True(((IOnDemandTransport)connection.Transport).UseOnDemandInput());
        Assert.True(((IOnDemandTransport)connection.Transport).UseOnDemandOutput());
        var input = connection.Transport.Input;
        var output = connection.Transport.Output;
        var message = new byte[64];
        var back = new byte[64];

        // The peer, on a thread of its own, sends only once the last echo came back: the reader waits for each
        // message, so each read goes through the epoll set (arm, event, the pool's work item, the receive).
        async Task RoundTripsAsync(int count)
        {
            var echoing = new Thread(() =>
            {
                for (var i = 0; i < count; i++)
                {
                    peer.Send(message);
                    var received = 0;
                    while (received < back.Length)
                    {
                        received += peer.Receive(back, received, back.Length - received, SocketFlags.None);
                    }
                }
            });
            echoing.Start();
            for (var i = 0; i < count; i++)
            {
                var got = 0L;
                while (got < message.Length)
                {
                    var result = await input.ReadAsync();
                    got = result.Buffer.Length;
                    input.AdvanceTo(got >= message.Length ? result.Buffer.End : result.Buffer.Start, result.Buffer.End);
                }

                message.CopyTo(output.GetMemory(message.Length));
                output.Advance(message.Length);
                await output.FlushAsync();
            }

            echoing.Join();
        }

        // Past the warm-up, the methods on the path are at their final tier (the tier-up waits for a quiet 100 ms).
        await RoundTripsAsync(5_000);
        await Task.Delay(500);
        await RoundTripsAsync(1_000);
        // The least of three rounds: an allocation per message shows in each, the rest of the process (timers, a pool
        // thread started under load) in some.
        const int measured = 10_000;
        var perMessage = double.MaxValue;
        for (var round = 0; round < 3; round++)
        {
            var before = GC.GetTotalAllocatedBytes(precise: true);
            await RoundTripsAsync(measured);
            perMessage = Math.Min(perMessage, (GC.GetTotalAllocatedBytes(precise: true) - before) / (double)measured);
        }

        // One object per message would be 24 B or more.
        Assert.True(perMessage < 4, string.Create(CultureInfo.InvariantCulture, $"{perMessage:0.00} B per round trip"));
    }
}

