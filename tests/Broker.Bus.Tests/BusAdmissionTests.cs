using System.Collections.Concurrent;
using Broker.Abstractions;
using Broker.TestKit;

namespace Broker.Bus.Tests;

/// <summary>
/// Adapters' connections and NATS clients take their places under <c>max_connections</c> from one count: many bus
/// connects racing each other and NATS connects on many threads are admitted exactly up to the limit, round after
/// round, with the places given back when they close.
/// </summary>
public sealed class BusAdmissionTests
{
    [Fact(Timeout = 120_000)]
    public async Task Bus_connects_racing_nats_clients_get_exactly_the_free_places()
    {
        const int limit = 10;
        var (broker, harness) = await AdapterHarness.StartAsync(o => o.MaxConnections = limit);
        await using var _ = broker;
        for (var round = 0; round < 20; round++)
        {
            // The sockets are opened first, so what races is the admission itself.
            var peers = new List<AdapterPeer>();
            for (var i = 0; i < 24; i++)
            {
                peers.Add(await harness.ConnectAsync(broker));
            }

            var natsClients = new List<RawClient>();
            for (var i = 0; i < 8; i++)
            {
                natsClients.Add(await RawClient.ConnectAsync(broker.EndPoint, readInfo: false));
            }

            var admitted = new ConcurrentBag<IAsyncDisposable>();
            var refusals = new ConcurrentBag<string>();

            // A thread of its own for each, released by one barrier, so the connects run as nearly together as they can.
            using var barrier = new Barrier(peers.Count + natsClients.Count);
            var threads = peers.Select(peer => new Thread(() =>
            {
                barrier.SignalAndWait();
                var result = peer.ConnectAsync(broker.Bus).GetAwaiter().GetResult();
                if (result.Connection is { } connection)
                {
                    admitted.Add(connection);
                }
                else
                {
                    refusals.Add(result.Error == BusConnectError.MaxConnectionsExceeded ? "refused" : result.ErrorMessage ?? "?");
                }
            })).Concat(natsClients.Select(client => new Thread(() =>
            {
                barrier.SignalAndWait();
                client.SendAsync("CONNECT {\"verbose\":false}\r\n").GetAwaiter().GetResult();
                var transcript = client.PingAndCollectAsync(TimeSpan.FromSeconds(10)).GetAwaiter().GetResult();
                if (transcript.Closed)
                {
                    refusals.Add(transcript.Lines.Contains("-ERR 'maximum connections exceeded'") ? "refused" : transcript.ToString());
                }
                else
                {
                    admitted.Add(client);
                }
            }))).ToList();
            threads.ForEach(t => t.Start());
            await Task.Run(() => threads.ForEach(t => t.Join()));

            try
            {
                Assert.True(admitted.Count == limit, $"round {round}: {admitted.Count} admitted of {limit}");
                Assert.All(refusals, r => Assert.Equal("refused", r));
                Assert.Equal(limit, (await MonitorHttp.GetJsonAsync(broker, "/varz")).GetProperty("connections").GetInt32());
            }
            finally
            {
                foreach (var connection in admitted)
                {
                    await connection.DisposeAsync();
                }

                foreach (var client in natsClients)
                {
                    await client.DisposeAsync();
                }

                foreach (var peer in peers)
                {
                    await peer.DisposeAsync();
                }
            }

            await Eventually.AssertAsync(async () => (await MonitorHttp.GetJsonAsync(broker, "/varz")).GetProperty("connections").GetInt32() == 0, "every connection gone");
        }
    }

    [Fact(Timeout = 120_000)]
    public async Task Two_bus_connects_released_together_never_share_the_last_place()
    {
        var (broker, harness) = await AdapterHarness.StartAsync(o => o.MaxConnections = 1);
        await using var _ = broker;
        for (var round = 0; round < 300; round++)
        {
            await using var first = await harness.ConnectAsync(broker);
            await using var second = await harness.ConnectAsync(broker);

            // Two threads of their own, released by one barrier, so both connects run at the same moment.
            using var barrier = new Barrier(2);
            var results = new BusConnectResult[2];
            var threads = new[] { first, second }.Select((peer, i) => new Thread(() =>
            {
                barrier.SignalAndWait();
                results[i] = peer.ConnectAsync(broker.Bus).GetAwaiter().GetResult();
            })).ToList();
            threads.ForEach(t => t.Start());
            threads.ForEach(t => t.Join());

            var admitted = results.Where(r => r.Connection is not null).ToList();
            foreach (var result in admitted)
            {
                await result.Connection!.DisposeAsync();
            }

            Assert.True(admitted.Count == 1, $"round {round}: {admitted.Count} admitted of 1");
        }
    }
}
