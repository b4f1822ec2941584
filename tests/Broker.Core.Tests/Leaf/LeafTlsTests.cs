using Broker.TestKit;
using Xunit;

namespace Broker.Core.Tests.Leaf;

/// <summary>
/// Leaf node remotes over TLS to a nats-server 2.9.10 hub whose leaf port has <c>tls { }</c> (certificates from the test
/// CA), each scenario run with nats-server as the spoke too: the hub's INFO in clear text, then the upgrade; a client
/// certificate for a hub that verifies; the hub's name checked against the URL's host; a hub the spoke cannot trust
/// refused with a log line saying why, and dialled again. Waits poll /leafz or the logs.
/// </summary>
public sealed class LeafTlsTests
{
    private static readonly TestCertificates Certificates = TestCertificates.Shared;

    public static TheoryData<ServerKind> Kinds => new() { ServerKind.Ours, ServerKind.Reference };

    private static string HubTls(bool verify) =>
        $"  tls {{ cert_file: \"{Certificates.ServerCertFile}\", key_file: \"{Certificates.ServerKeyFile}\", ca_file: \"{Certificates.CaFile}\"{(verify ? ", verify: true" : "")} }}";

    private static LeafRemoteTlsOptions ClientTls(string? caFile = null) => new()
    {
        CertFile = Certificates.AliceCertFile,
        KeyFile = Certificates.AliceKeyFile,
        CaFile = caFile ?? Certificates.CaFile,
    };

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task A_hub_that_verifies_takes_the_spokes_certificate_and_messages_cross(ServerKind kind)
    {
        await using var hub = await LeafHub.StartAsync(HubTls(verify: true));
        await using var spoke = await LeafSpoke.StartAsync(kind, new SpokeRemote(hub.LeafUrl()) { Tls = ClientTls() });

        await LeafTraffic.CrossesBothWaysAsync(hub, spoke);
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task The_link_comes_back_over_tls_after_the_hub_restarts(ServerKind kind)
    {
        await using var hub = await LeafHub.StartAsync(HubTls(verify: true));
        await using var spoke = await LeafSpoke.StartAsync(kind, new SpokeRemote($"tls://127.0.0.1:{hub.LeafPort}") { Tls = ClientTls() });

        await LeafTraffic.ComesBackAfterTheHubRestartsAsync(hub, spoke);
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task A_hub_asking_for_tls_gets_it_from_a_remote_without_a_tls_block_which_checks_the_system_roots(ServerKind kind)
    {
        await using var hub = await LeafHub.StartAsync(HubTls(verify: false));
        await using var spoke = await LeafSpoke.StartAsync(kind, new SpokeRemote(hub.LeafUrl()));

        // The test CA is not among the system's roots: the spoke refuses the hub, says why, and keeps trying.
        await WaitForLogAsync(spoke, "certificate signed by unknown authority", times: 2);
        Assert.Equal(0, (await hub.LeafzAsync()).GetProperty("leafnodes").GetInt32());
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task Insecure_accepts_any_hub_certificate(ServerKind kind)
    {
        await using var hub = await LeafHub.StartAsync(HubTls(verify: false));
        await using var spoke = await LeafSpoke.StartAsync(kind, new SpokeRemote(hub.LeafUrl()) { Tls = new LeafRemoteTlsOptions { Insecure = true } });

        await LeafTraffic.InterestReachesTheHubAsync(hub, spoke, "insecure");
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task A_ca_file_the_hub_does_not_chain_to_is_refused_with_a_clear_log_line(ServerKind kind)
    {
        await using var hub = await LeafHub.StartAsync(HubTls(verify: true));
        await using var spoke = await LeafSpoke.StartAsync(kind, new SpokeRemote(hub.LeafUrl()) { Tls = ClientTls(Certificates.UntrustedCaFile) });

        await WaitForLogAsync(spoke, "TLS leafnode handshake error", times: 2);
        Assert.Contains("x509: certificate signed by unknown authority", spoke.Log, StringComparison.Ordinal);
        Assert.Equal(0, (await hub.LeafzAsync()).GetProperty("leafnodes").GetInt32());
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task A_hub_that_verifies_refuses_a_spoke_without_a_certificate(ServerKind kind)
    {
        await using var hub = await LeafHub.StartAsync(HubTls(verify: true));
        await using var spoke = await LeafSpoke.StartAsync(kind, new SpokeRemote(hub.LeafUrl()) { Tls = new LeafRemoteTlsOptions { CaFile = Certificates.CaFile } });

        Assert.True(
            await Eventually.TrueAsync(() => hub.Log.Contains("TLS leafnode handshake error", StringComparison.Ordinal), TimeSpan.FromSeconds(10)),
            hub.Log);
        await spoke.DisposeAsync();
        Assert.Equal(0, (await hub.LeafzAsync()).GetProperty("leafnodes").GetInt32());
    }

    /// <summary>The hub's certificate names localhost and 127.0.0.1; the URL's host 127.0.0.2 is neither.</summary>
    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task A_hub_whose_certificate_does_not_name_the_urls_host_is_refused(ServerKind kind)
    {
        await using var hub = await LeafHub.StartAsync(HubTls(verify: false), host: "127.0.0.2");
        await using var spoke = await LeafSpoke.StartAsync(kind, new SpokeRemote(hub.LeafUrl()) { Tls = ClientTls() });

        await WaitForLogAsync(spoke, "TLS leafnode handshake error", times: 1);
        Assert.Contains("x509: certificate is valid for", spoke.Log, StringComparison.Ordinal);
        Assert.Contains("not 127.0.0.2", spoke.Log, StringComparison.Ordinal);
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public async Task A_host_name_in_the_url_is_checked_against_the_certificate(ServerKind kind)
    {
        await using var hub = await LeafHub.StartAsync(HubTls(verify: true));
        await using var spoke = await LeafSpoke.StartAsync(kind, new SpokeRemote($"nats-leaf://localhost:{hub.LeafPort}") { Tls = ClientTls() });

        await LeafTraffic.InterestReachesTheHubAsync(hub, spoke, "named");
    }

    // Each failed attempt is logged (nats-server logs every one); two mean the spoke dialled again.
    internal static Task WaitForLogAsync(LeafSpoke spoke, string text, int times) => WaitForLogAsync(() => spoke.Log, "the spoke", text, times);

    /// <summary>Polls <paramref name="log"/> until <paramref name="text"/> is in it <paramref name="times"/> times.</summary>
    internal static async Task WaitForLogAsync(Func<string> log, string who, string text, int times) =>
        Assert.True(
            await Eventually.TrueAsync(() => Count(log(), text) >= times, TimeSpan.FromSeconds(15)),
            $"expected \"{text}\" {times} time(s) in {who}:\n{log()}");

    private static int Count(string log, string text)
    {
        var count = 0;
        for (var at = log.IndexOf(text, StringComparison.Ordinal); at >= 0; at = log.IndexOf(text, at + text.Length, StringComparison.Ordinal))
        {
            count++;
        }

        return count;
    }
}
