using System.Security.Authentication;
using System.Text.Json;
using Broker.Core.Auth;
using Broker.TestKit;

namespace Broker.Tls.Tests;

/// <summary><c>verify</c> and <c>verify_and_map</c>: client certificates checked against <c>ca_file</c> and mapped to users.</summary>
public sealed class ClientCertificateTests
{
    private static TestCertificates Certs => TestCertificates.Shared;

    [Fact(Timeout = 30_000)]
    public async Task Verify_accepts_a_certificate_from_the_ca_and_announces_tls_verify()
    {
        await using var broker = await TlsBroker.StartAsync(TlsBroker.Settings(("verify", "true"), ("ca_file", Certs.CaFile)));
        await using var client = await SecureClient.ConnectAsync(broker.Port, certificate: Certs.Alice);

        using var info = JsonDocument.Parse(client.Info!["INFO ".Length..]);
        Assert.True(info.RootElement.GetProperty("tls_verify").GetBoolean());
        await client.SendAsync("PING\r\n");
        Assert.Equal("PONG", await client.ReadLineAsync());
    }

    [Fact(Timeout = 30_000)]
    public async Task Verify_refuses_a_client_without_a_certificate()
    {
        await using var broker = await TlsBroker.StartAsync(TlsBroker.Settings(("verify", "true"), ("ca_file", Certs.CaFile)));
        await AssertRefusedAsync(broker.Port, certificate: null);
        Assert.Contains(broker.Logs.Entries, e => e.Message.Contains("TLS handshake error", StringComparison.Ordinal));
    }

    [Fact(Timeout = 30_000)]
    public async Task Verify_refuses_a_certificate_signed_by_another_ca()
    {
        await using var broker = await TlsBroker.StartAsync(TlsBroker.Settings(("verify", "true"), ("ca_file", Certs.CaFile)));
        await AssertRefusedAsync(broker.Port, Certs.Mallory);

        // Others are unaffected.
        await using var client = await SecureClient.ConnectAsync(broker.Port, certificate: Certs.Bob);
        await client.SendAsync("PING\r\n");
        Assert.Equal("PONG", await client.ReadLineAsync());
    }

    [Fact(Timeout = 30_000)]
    public async Task Pinned_certs_accept_only_the_pinned_key()
    {
        var alicePin = Convert.ToHexString(System.Security.Cryptography.SHA256.HashData(Certs.Alice.PublicKey.ExportSubjectPublicKeyInfo()));
        await using var broker = await TlsBroker.StartAsync(TlsBroker.Settings(
            ("verify", "true"), ("ca_file", Certs.CaFile), ("pinned_certs:0", alicePin.ToLowerInvariant())));

        await using (var alice = await SecureClient.ConnectAsync(broker.Port, certificate: Certs.Alice))
        {
            await alice.SendAsync("PING\r\n");
            Assert.Equal("PONG", await alice.ReadLineAsync());
        }

        await AssertRefusedAsync(broker.Port, Certs.Bob);
    }

    [Fact(Timeout = 30_000)]
    public async Task Verify_and_map_binds_users_by_subject_email_and_dns_name_with_their_permissions()
    {
        await using var broker = await TlsBroker.StartAsync(
            TlsBroker.Settings(("verify_and_map", "true"), ("ca_file", Certs.CaFile)),
            options => options.Authorization.Users =
            [
                new UserOptions
                {
                    // Given in another order than the certificate's subject: nats-server accepts reordered DNs.
                    User = "O=Acme, OU=eng, CN=alice",
                    Permissions = new PermissionsOptions { Publish = new SubjectPermissionOptions { Allow = ["alice.>"] } },
                },
                new UserOptions { User = "bob.acme.test" },
                new UserOptions { User = "someone", Password = "secret" },
            ]);

        await using var alice = await SecureClient.ConnectAsync(broker.Port, certificate: Certs.Alice);
        await alice.SendAsync("CONNECT {\"verbose\":false}\r\nPUB alice.x 1\r\na\r\nPUB bob.x 1\r\nb\r\nPING\r\n");
        Assert.Equal(["-ERR 'Permissions Violation for Publish to \"bob.x\"'", "PONG"], await alice.ReadUntilAsync("PONG"));

        await using var bob = await SecureClient.ConnectAsync(broker.Port, certificate: Certs.Bob);
        await bob.SendAsync("CONNECT {\"verbose\":false}\r\nPUB bob.x 1\r\nb\r\nPING\r\n");
        Assert.Equal(["PONG"], await bob.ReadUntilAsync("PONG"));
    }

    [Fact(Timeout = 30_000)]
    public async Task Verify_and_map_maps_an_email_alternative_name_first()
    {
        await using var broker = await TlsBroker.StartAsync(
            TlsBroker.Settings(("verify_and_map", "true"), ("ca_file", Certs.CaFile)),
            options => options.Authorization.Users =
            [
                new UserOptions
                {
                    User = "alice@acme.test",
                    Permissions = new PermissionsOptions { Subscribe = new SubjectPermissionOptions { Allow = ["mail"] } },
                },
                new UserOptions { User = "CN=alice,OU=eng,O=Acme" },
            ]);

        await using var alice = await SecureClient.ConnectAsync(broker.Port, certificate: Certs.Alice);
        await alice.SendAsync("CONNECT {\"verbose\":false}\r\nSUB other 1\r\nPING\r\n");
        Assert.Equal(["-ERR 'Permissions Violation for Subscription to \"other\"'", "PONG"], await alice.ReadUntilAsync("PONG"));
    }

    [Fact(Timeout = 30_000)]
    public async Task Verify_and_map_refuses_a_certificate_that_names_no_user_and_ignores_connect_credentials()
    {
        await using var broker = await TlsBroker.StartAsync(
            TlsBroker.Settings(("verify_and_map", "true"), ("ca_file", Certs.CaFile)),
            options => options.Authorization.Users = [new UserOptions { User = "someone", Password = "secret" }]);

        await using var carol = await SecureClient.ConnectAsync(broker.Port, certificate: Certs.Carol);
        await carol.SendAsync("CONNECT {\"verbose\":false,\"user\":\"someone\",\"pass\":\"secret\"}\r\nPING\r\n");
        Assert.Equal(["-ERR 'Authorization Violation'"], await carol.ExpectClosedAsync());
    }

    private static async Task AssertRefusedAsync(int port, System.Security.Cryptography.X509Certificates.X509Certificate2? certificate)
    {
        await using var client = await SecureClient.ConnectAsync(port, TlsStart.None);
        try
        {
            await client.StartTlsAsync(certificate);
        }
        catch (Exception ex) when (ex is AuthenticationException or IOException)
        {
            // TLS 1.2 refuses during the handshake.
            return;
        }

        // TLS 1.3 finishes the client's side first; the server's refusal arrives as an alert or a close on read.
        await client.SendAsync("PING\r\n");
        var lines = await client.ExpectClosedAsync(TimeSpan.FromSeconds(10));
        Assert.DoesNotContain("PONG", lines);
    }
}
