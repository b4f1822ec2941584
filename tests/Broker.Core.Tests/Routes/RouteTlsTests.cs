using Broker.TestKit;
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
    public Task A_mixed_cluster_over_tls_carries_messages_requests_and_queue_requests(ServerKind seedKind)
        => RouteClusterTests.MixedClusterCarriesTrafficAsync(seedKind, Tls, queueRequests: true);

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

        // /varz describes the route listener's TLS as nats-server's does.
        var cluster = (await Leaf.LeafHub.GetAsync(member.HttpPort, "/varz")).GetProperty("cluster");
        Assert.Equal((true, true, 2.0), (cluster.GetProperty("tls_required").GetBoolean(), cluster.GetProperty("tls_verify").GetBoolean(), cluster.GetProperty("tls_timeout").GetDouble()));
    }

    [Fact]
    public Task A_cluster_of_brokers_over_tls_takes_a_restarted_member_back() => RouteClusterTests.BrokersReplaceARestartedMemberAsync(Tls);

    private static Task WaitForLogAsync(ClusterNode node, string text, int times) =>
        Leaf.LeafTlsTests.WaitForLogAsync(() => node.Log, $"{node.Name} ({node.Kind})", text, times);
}
