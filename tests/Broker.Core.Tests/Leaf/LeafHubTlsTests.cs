using System.Diagnostics;
using System.Globalization;
using System.Security.Cryptography.X509Certificates;
using Broker.TestKit;
using Xunit;

namespace Broker.Core.Tests.Leaf;

/// <summary>
/// TLS on the hub's leaf port (<c>leafnodes { tls { } }</c>), each scenario run with our broker and nats-server 2.9.10
/// as the hub (the reference's run is the control): the first INFO in clear text with <c>tls_required</c> (and
/// <c>tls_verify</c>), then the spoke's handshake; a nats-server spoke and our spoke with client certificates carry
/// messages and interest both ways; a spoke that does not trust the hub, a spoke without a certificate or with one
/// from another CA, and a connection that never starts TLS are refused with nats-server's log lines. Waits poll
/// /leafz, the logs or the socket.
/// </summary>
public sealed class LeafHubTlsTests
{
    private static readonly TestCertificates Certificates = TestCertificates.Shared;

    public static TheoryData<ServerKind, ServerKind> Pairs => new()
    {
        { ServerKind.Ours, ServerKind.Reference },
        { ServerKind.Ours, ServerKind.Ours },
        { ServerKind.Reference, ServerKind.Reference },
    };

    public static TheoryData<ServerKind> HubKinds => new() { ServerKind.Ours, ServerKind.Reference };

    private static Task<HubUnderTest> StartHubAsync(ServerKind kind, bool verify) =>
        HubUnderTest.StartAsync(
            kind,
            o =>
            {
                o.LeafNodes.Hub.Tls = new LeafHubTlsOptions { CertFile = Certificates.ServerCertFile, KeyFile = Certificates.ServerKeyFile, CaFile = Certificates.CaFile, Verify = verify };

                // What a configuration file with tls and no authorization.timeout sets, as nats-server's default.
                o.LeafNodes.Hub.AuthTimeout = TimeSpan.FromSeconds(3);
            },
            $"  tls {{ cert_file: \"{Certificates.ServerCertFile}\", key_file: \"{Certificates.ServerKeyFile}\", ca_file: \"{Certificates.CaFile}\"{(verify ? ", verify: true" : "")} }}");

    private static LeafRemoteTlsOptions ClientTls(string? caFile = null, string? certFile = null, string? keyFile = null) => new()
    {
        CertFile = certFile ?? Certificates.AliceCertFile,
        KeyFile = keyFile ?? Certificates.AliceKeyFile,
        CaFile = caFile ?? Certificates.CaFile,
    };

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task A_hub_that_verifies_takes_the_spokes_certificate_and_messages_and_interest_cross_both_ways(ServerKind hubKind, ServerKind spokeKind)
    {
        await using var hub = await StartHubAsync(hubKind, verify: true);
        await using var spoke = await LeafSpoke.StartAsync(spokeKind, new SpokeRemote(hub.LeafUrl()) { Tls = ClientTls() });

        await LeafTraffic.CrossesBothWaysAsync(hub, spoke);
    }

    /// <summary>A remote with only <c>ca_file</c> (no certificate) to a hub that does not verify: the INFO's <c>tls_required</c> starts the upgrade.</summary>
    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task A_hub_that_does_not_verify_takes_a_spoke_without_a_certificate(ServerKind hubKind, ServerKind spokeKind)
    {
        await using var hub = await StartHubAsync(hubKind, verify: false);
        await using var spoke = await LeafSpoke.StartAsync(spokeKind, new SpokeRemote($"nats-leaf://localhost:{hub.LeafPort}") { Tls = new LeafRemoteTlsOptions { CaFile = Certificates.CaFile } });

        await LeafTraffic.InterestReachesTheHubAsync(hub, spoke, "no.certificate");
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task A_spoke_that_does_not_trust_the_hubs_certificate_is_not_linked(ServerKind hubKind, ServerKind spokeKind)
    {
        await using var hub = await StartHubAsync(hubKind, verify: true);
        await using var spoke = await LeafSpoke.StartAsync(spokeKind, new SpokeRemote(hub.LeafUrl()) { Tls = ClientTls(Certificates.UntrustedCaFile) });

        await LeafTlsTests.WaitForLogAsync(spoke, "TLS leafnode handshake error", times: 2);
        Assert.Contains("x509: certificate signed by unknown authority", spoke.Log, StringComparison.Ordinal);
        Assert.Equal(0, (await hub.LeafzAsync()).GetProperty("leafnodes").GetInt32());
    }

    [Theory]
    [MemberData(nameof(Pairs))]
    public async Task A_hub_that_verifies_refuses_a_spoke_without_a_certificate(ServerKind hubKind, ServerKind spokeKind)
    {
        await using var hub = await StartHubAsync(hubKind, verify: true);
        await using var spoke = await LeafSpoke.StartAsync(spokeKind, new SpokeRemote(hub.LeafUrl()) { Tls = new LeafRemoteTlsOptions { CaFile = Certificates.CaFile } });

        await WaitForHubLogAsync(hub, "TLS leafnode handshake error");
        Assert.Contains("tls: client didn't provide a certificate", hub.Log, StringComparison.Ordinal);
        Assert.Equal(0, (await hub.LeafzAsync()).GetProperty("leafnodes").GetInt32());
    }

    [Theory]
    [MemberData(nameof(HubKinds))]
    public async Task A_hub_that_verifies_refuses_a_certificate_from_another_ca(ServerKind hubKind)
    {
        var directory = Directory.CreateTempSubdirectory("ltls-").FullName;
        var certFile = Path.Combine(directory, "mallory.pem");
        var keyFile = Path.Combine(directory, "mallory-key.pem");
        await File.WriteAllTextAsync(certFile, Certificates.Mallory.ExportCertificatePem());
        await File.WriteAllTextAsync(keyFile, Certificates.Mallory.GetECDsaPrivateKey()!.ExportPkcs8PrivateKeyPem());
        await using var hub = await StartHubAsync(hubKind, verify: true);
        // Our spoke: a nats-server spoke holds back a certificate the hub's acceptable CAs do not name (Go's client
        // picks by issuer), so the hub sees none, as in the test above.
        await using var spoke = await LeafSpoke.StartAsync(ServerKind.Ours, new SpokeRemote(hub.LeafUrl()) { Tls = ClientTls(certFile: certFile, keyFile: keyFile) });

        await WaitForHubLogAsync(hub, "TLS leafnode handshake error");
        Assert.True(hub.Log.Contains("tls: failed to verify client certificate: x509: certificate signed by unknown authority", StringComparison.Ordinal), hub.Log);
        Assert.Equal(0, (await hub.LeafzAsync()).GetProperty("leafnodes").GetInt32());
    }

    /// <summary>The INFO in clear text asks for TLS; a connection that never starts it is closed after the TLS timeout (2 seconds) with nothing more sent.</summary>
    [Theory]
    [MemberData(nameof(HubKinds))]
    public async Task A_connection_that_does_not_start_tls_is_closed_after_the_timeout(ServerKind hubKind)
    {
        await using var hub = await StartHubAsync(hubKind, verify: true);
        var clock = Stopwatch.StartNew();
        await using var raw = await RawClient.ConnectAsync(hub.LeafPort);

        Assert.Contains("\"tls_required\":true,\"tls_verify\":true,", raw.Info, StringComparison.Ordinal);
        Assert.Contains("\"leafnode_urls\":[", raw.Info, StringComparison.Ordinal);
        Assert.Empty(await raw.ExpectClosedAsync(TimeSpan.FromSeconds(10)));
        Assert.InRange(clock.Elapsed, TimeSpan.FromSeconds(1.5), TimeSpan.FromSeconds(8));
        // nats-server logs its read deadline ("TLS leafnode handshake error: ... i/o timeout") and, unless that close
        // came first, "TLS handshake timeout"; the broker logs the latter.
        await WaitForHubLogAsync(hub, hubKind == ServerKind.Ours ? "TLS handshake timeout" : "i/o timeout");

        var leaf = (await LeafHub.GetAsync(hub.HttpPort, "/varz")).GetProperty("leaf");
        Assert.Equal((true, true, 2.0, 3.0), (leaf.GetProperty("tls_required").GetBoolean(), leaf.GetProperty("tls_verify").GetBoolean(), leaf.GetProperty("tls_timeout").GetDouble(), leaf.GetProperty("auth_timeout").GetDouble()));
    }

    [Theory]
    [MemberData(nameof(HubKinds))]
    public async Task A_connect_in_clear_text_is_a_failed_handshake(ServerKind hubKind)
    {
        await using var hub = await StartHubAsync(hubKind, verify: false);
        await using var raw = await RawClient.ConnectAsync(hub.LeafPort);

        Assert.Contains("\"tls_required\":true,\"max_payload\"", raw.Info, StringComparison.Ordinal);
        await raw.SendAsync("CONNECT {\"name\":\"plain\"}\r\nPING\r\n");
        Assert.Empty(await raw.ExpectClosedAsync(TimeSpan.FromSeconds(10)));
        await WaitForHubLogAsync(hub, "TLS leafnode handshake error");
        Assert.Equal(0, (await hub.LeafzAsync()).GetProperty("leafnodes").GetInt32());
    }

    private static async Task WaitForHubLogAsync(HubUnderTest hub, string text) =>
        Assert.True(
            await Eventually.TrueAsync(() => hub.Log.Contains(text, StringComparison.Ordinal), TimeSpan.FromSeconds(15)),
            string.Create(CultureInfo.InvariantCulture, $"expected \"{text}\" in the hub's ({hub.Kind}) log:\n{hub.Log}"));
}
