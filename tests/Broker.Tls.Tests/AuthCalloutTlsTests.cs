using Broker.Core.Auth;
using Broker.TestKit;
using NATS.Client.Core;
using NATS.NKeys;

namespace Broker.Tls.Tests;

/// <summary>
/// The authorization callout's <c>client_tls</c> (nats-server 2.10 <c>processClientOrLeafCallout</c>): the TLS version,
/// the cipher suite and the client certificate in PEM, under <c>verified_chains</c> when <c>verify</c> checked it.
/// </summary>
public sealed class AuthCalloutTlsTests
{
    [Fact(Timeout = 30_000)]
    public async Task Request_describes_the_tls_session_and_the_verified_client_certificate()
    {
        var issuer = KeyPair.CreatePair(PrefixByte.Account);
        await using var broker = await TlsBroker.StartAsync(
            TlsBroker.Settings(("verify", "true"), ("ca_file", TlsBroker.Certificates.CaFile), ("allow_non_tls", "true")),
            o =>
            {
                o.Accounts.Add(new AccountOptions { Name = "AUTH", Users = [new UserOptions { User = "auth", Password = "auth" }] });
                o.Accounts.Add(new AccountOptions { Name = "B" });
                o.Authorization.AuthCallout = new AuthCalloutOptions { Issuer = issuer.GetPublicKey(), Account = "AUTH", AuthUsers = ["auth"] };
            });

        // The service connects in clear text (allow_non_tls); the client it authorizes over TLS with a certificate.
        await using var service = await CalloutService.StartAsync(broker.Url, issuer, _ => new CalloutAnswer.Allow("B"), configure: o => o with { TlsOpts = new NatsTlsOpts { Mode = TlsMode.Disable } });
        await using var client = await SecureClient.ConnectAsync(broker.Port, certificate: TlsBroker.Certificates.Alice, protocols: System.Security.Authentication.SslProtocols.Tls12);
        await client.SendAsync("CONNECT {\"verbose\":false,\"user\":\"alice\",\"pass\":\"x\"}\r\nPING\r\n");
        Assert.Equal("PONG", await client.ReadLineAsync());

        var tls = Assert.Single(service.Requests).Claims.Nats.Tls;
        Assert.NotNull(tls);
        Assert.Equal("1.2", tls.Version);
        Assert.StartsWith("TLS_", tls.Cipher, StringComparison.Ordinal);
        Assert.Null(tls.Certs);
        var pem = Assert.Single(Assert.Single(tls.VerifiedChains!));
        Assert.StartsWith("-----BEGIN CERTIFICATE-----\n", pem, StringComparison.Ordinal);
        Assert.EndsWith("-----END CERTIFICATE-----\n", pem, StringComparison.Ordinal);
        Assert.Equal(TlsBroker.Certificates.Alice.RawData, System.Security.Cryptography.X509Certificates.X509Certificate2.CreateFromPem(pem).RawData);
    }
}
