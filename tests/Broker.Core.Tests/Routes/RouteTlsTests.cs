using System.Collections.Concurrent;
using Broker.TestKit;
using NATS.Client.Core;
using Xunit;

namespace Broker.Core.Tests.Routes;

/// <summary>
/// Route TLS (<c>cluster.tls</c>) beside nats-server 2.9.10 members with the same block: the handshake before anything
/// else on both sides, each member presenting the test CA's member certificate as client and as server; a mixed
/// three-member cluster carrying messages and queue requests between clients on every member; a member whose
/// <c>ca_file</c> the others' certificates do not chain to refused with nats-server's log line, and dialling again;
/// a cluster of brokers taking a restarted member back over TLS. Waits poll /routez, the logs or a subscription.
/// </summary>
public sealed class RouteTlsTests
{
    private static readonly TestCertificates Certificates = TestCertificates.Shared;

    public static TheoryData<ServerKind> Kinds => new() { ServerKind.Ours, ServerKind.Reference };

    public static TheoryData<ServerKind, ServerKind> SeedAndWrongCa => new()
    {
        { ServerKind.Reference, ServerKind.Ours },
        { ServerKind.Reference, ServerKind.Reference },
        { ServerKind.Ours, ServerKind.Reference },
        { ServerKind.Ours, ServerKind.Ours },
    };

    private static RouteSetup Tls => RouteSetup.Tls(Certificates.CaFile);

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task A_mixed_cluster_over_tls_carries_messages_and_queue_requests(ServerKind seedKind)
    {
        await using var a = await ClusterNode.StartAsync(seedKind, "A", setup: Tls);
        await using var b = await ClusterNode.StartAsync(ServerKind.Reference, "B", [a.RouteUrl()], setup: Tls);
        await using var c = await ClusterNode.StartAsync(ServerKind.Ours, "C", [a.RouteUrl()], setup: Tls);
        await a.WaitForRoutesAsync(2);
        await b.WaitForRoutesAsync(2);
        await c.WaitForRoutesAsync(2);

        await using var onA = await NatsClients.ConnectAsync(a.ClientUrl, "a");
        await using var onB = await NatsClients.ConnectAsync(b.ClientUrl, "b");
        await using var onC = await NatsClients.ConnectAsync(c.ClientUrl, "c");
        await using var subB = await onB.SubscribeCoreAsync<string>("to.b");
        await using var subC = await onC.SubscribeCoreAsync<string>("to.c");
        await onB.PingAsync();
        await onC.PingAsync();
        await a.WaitForRoutesAsync(2, "to.b", "to.c");
        await c.WaitForRoutesAsync(2, "to.b");
        await b.WaitForRoutesAsync(2, "to.c");

        await onA.PublishAsync("to.b", "a-to-b", headers: new NatsHeaders { ["X-Tls"] = "1" });
        var atB = await subB.NextAsync();
        Assert.Equal(("a-to-b", "1"), (atB.Data, atB.Headers?["X-Tls"].ToString()));
        await onB.PublishAsync("to.c", "b-to-c");
        Assert.Equal("b-to-c", (await subC.NextAsync()).Data);
        await onC.PublishAsync("to.b", "c-to-b");
        Assert.Equal("c-to-b", (await subB.NextAsync()).Data);

        // A queue group with a member on each server: every request answered once, by one member.
        var answered = new ConcurrentBag<string>();
        using var stop = new CancellationTokenSource();
        var members = new List<(INatsSub<string> Sub, Task Loop)>();
        foreach (var connection in new[] { onA, onB, onC })
        {
            var sub = await connection.SubscribeCoreAsync<string>("svc", queueGroup: "workers");
            members.Add((sub, Serve(sub, connection.Opts.Name, answered, stop.Token)));
            await connection.PingAsync();
        }

        await a.WaitForRoutesAsync(2, "svc");
        await b.WaitForRoutesAsync(2, "svc");
        await c.WaitForRoutesAsync(2, "svc");
        const int count = 30;
        for (var i = 0; i < count; i++)
        {
            var requester = new[] { onA, onB, onC }[i % 3];
            var reply = await requester.RequestAsync<string, string>("svc", $"r{i}");
            Assert.EndsWith($":r{i}", reply.Data, StringComparison.Ordinal);
        }

        await onA.PingAsync();
        await onB.PingAsync();
        await onC.PingAsync();
        Assert.Equal(count, answered.Count);
        Assert.Equal(count, answered.Distinct().Count());
        await stop.CancelAsync();
        foreach (var (sub, loop) in members)
        {
            await sub.DisposeAsync();
            await loop;
        }
    }

    [Theory]
    [MemberData(nameof(SeedAndWrongCa))]
    public async Task A_member_with_a_ca_the_others_do_not_chain_to_is_refused_with_nats_servers_log_line(ServerKind seedKind, ServerKind wrongKind)
    {
        await using var a = await ClusterNode.StartAsync(seedKind, "A", setup: Tls);
        await using var wrong = await ClusterNode.StartAsync(wrongKind, "W", [a.RouteUrl()], setup: RouteSetup.Tls(Certificates.UntrustedCaFile));

        // The dialling member cannot verify the seed's certificate: nats-server's line, once per attempt (it dials again).
        await WaitForLogAsync(wrong, "TLS route handshake error: x509: certificate signed by unknown authority", times: 2);
        if (wrongKind == ServerKind.Reference)
        {
            // Go's client sends the bad_certificate alert, which the seed logs. The framework's SslStream on Linux checks
            // the seed's certificate after its handshake and closes without an alert, so a seed sees our refusal as a close.
            await WaitForLogAsync(a, "TLS route handshake error: remote error: tls: bad certificate", times: 1);
        }

        Assert.Equal(0, (await a.RoutezAsync()).GetProperty("num_routes").GetInt32());
        Assert.Equal(0, (await wrong.RoutezAsync()).GetProperty("num_routes").GetInt32());
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task Insecure_skips_the_check_of_the_seeds_certificate_but_the_seed_still_verifies_the_member(ServerKind kind)
    {
        await using var a = await ClusterNode.StartAsync(ServerKind.Reference, "A", setup: Tls);
        await using var member = await ClusterNode.StartAsync(kind, "M", [a.RouteUrl()], setup: RouteSetup.Tls(Certificates.UntrustedCaFile, insecure: true));

        // The member trusts nothing the seed chains to, but insecure skips the check; the seed checks the member's certificate against its own ca_file.
        await a.WaitForRoutesAsync(1);
        Assert.Contains("TLS certificate chain and hostname of solicited routes will not be verified. DO NOT USE IN PRODUCTION!", member.Log, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_cluster_of_brokers_over_tls_takes_a_restarted_member_back()
    {
        await using var a = await ClusterNode.StartAsync(ServerKind.Ours, "A", setup: Tls);
        await using var b = await ClusterNode.StartAsync(ServerKind.Ours, "B", [a.RouteUrl()], setup: Tls);
        await using var c = await ClusterNode.StartAsync(ServerKind.Ours, "C", [a.RouteUrl(), b.RouteUrl()], setup: Tls);
        await a.WaitForRoutesAsync(2);
        await b.WaitForRoutesAsync(2);
        await c.WaitForRoutesAsync(2);

        await using var onA = await NatsClients.ConnectAsync(a.ClientUrl, "a");
        await using var subA = await onA.SubscribeCoreAsync<string>("in.a");
        await onA.PingAsync();
        await c.WaitForRoutesAsync(2, "in.a");
        await b.WaitForRoutesAsync(2, "in.a");

        await c.RestartAsync();
        await c.WaitForRoutesAsync(2, "in.a");
        await a.WaitForRoutesAsync(2);
        await b.WaitForRoutesAsync(2);
        await using var onC = await NatsClients.ConnectAsync(c.ClientUrl, "c");
        await onC.PublishAsync("in.a", "after-restart");
        Assert.Equal("after-restart", (await subA.NextAsync()).Data);
        await using var onB = await NatsClients.ConnectAsync(b.ClientUrl, "b");
        await onB.PublishAsync("in.a", "from-b");
        Assert.Equal("from-b", (await subA.NextAsync()).Data);
    }

    private static async Task WaitForLogAsync(ClusterNode node, string text, int times) =>
        Assert.True(
            await Eventually.TrueAsync(() => Count(node.Log, text) >= times, TimeSpan.FromSeconds(15)),
            $"expected \"{text}\" {times} time(s) in {node.Name} ({node.Kind}):\n{node.Log}");

    private static int Count(string log, string text)
    {
        var count = 0;
        for (var at = log.IndexOf(text, StringComparison.Ordinal); at >= 0; at = log.IndexOf(text, at + text.Length, StringComparison.Ordinal))
        {
            count++;
        }

        return count;
    }

    private static async Task Serve(INatsSub<string> sub, string? name, ConcurrentBag<string> answered, CancellationToken stop)
    {
        try
        {
            await foreach (var request in sub.Msgs.ReadAllAsync(stop))
            {
                answered.Add(request.Data!);
                await request.ReplyAsync($"{name}:{request.Data}", cancellationToken: stop);
            }
        }
        catch (OperationCanceledException)
        {
        }
    }
}
