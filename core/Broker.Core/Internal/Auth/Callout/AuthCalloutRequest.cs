using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using Broker.Abstractions;
using Broker.Core.Auth;
using Broker.Core.Internal.Jwt;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal.Auth.Callout;

/// <summary>What the callout is told about the client it authorizes (nats-server <c>fillClientInfo</c>, <c>fillConnectOpts</c>, the TLS state).</summary>
/// <param name="Client">The client's identity; its user is the one it authenticated as or named (nats-server <c>getRawAuthUser</c>): NKey, user name, JWT user key or token.</param>
/// <param name="Connect">The client's CONNECT.</param>
/// <param name="Nonce">The nonce its INFO carried, or null.</param>
/// <param name="Tls">TLS on the connection, or null.</param>
internal sealed record CalloutCandidate(Events.ClientInfo Client, ConnectMessage Connect, string? Nonce, ITlsConnectionFeature? Tls);

/// <summary>
/// Builds the <c>authorization_request</c> claims nats-server 2.10's <c>processClientOrLeafCallout</c> sends: subject the
/// callout issuer (in operator mode the callout account), audience <c>nats-authorization-request</c>, expiry the authentication timeout, the server's identity
/// (with its curve key when requests are sealed), the fresh user key the response must be for, the client's
/// information and CONNECT, and its TLS state.
/// </summary>
internal static class AuthCalloutRequest
{
    /// <summary>The audience of every request.</summary>
    public const string Audience = "nats-authorization-request";

    public static AuthorizationRequestClaims Build(BrokerCore core, string issuer, CalloutCandidate client, string userNkey, string? serverXKey, TimeSpan timeout, DateTimeOffset now)
    {
        var connect = client.Connect;
        var claims = new AuthorizationRequestClaims
        {
            Subject = issuer,
            Audience = Audience,
            Expires = (now + timeout).ToUnixTimeSeconds(),
        };
        var fields = claims.Nats;
        fields.UserNkey = userNkey;
        fields.Server = new CalloutServerId
        {
            Name = core.ServerName,
            Host = core.Options.Host,
            Id = core.ServerId,
            Version = ServerInfo.CompatibleServerVersion,
            XKey = serverXKey,
        };

        // As nats-server: the nonce only when the CONNECT signed it.
        fields.ClientInfo = client.Client.ToInformation(string.IsNullOrEmpty(connect.Signature) ? null : client.Nonce);
        fields.ConnectOptions = new CalloutConnectOptions
        {
            Jwt = connect.Jwt,
            Nkey = connect.Nkey,
            SignedNonce = connect.Signature,
            Token = connect.AuthToken,
            Username = connect.User,
            Password = connect.Password,
            Name = connect.Name,
            Lang = connect.Lang,
            Version = connect.Version,
            Protocol = connect.Protocol ?? 0,
        };
        fields.Tls = client.Tls is { IsEstablished: true } tls ? Describe(tls) : null;
        return claims;
    }

    // nats-server: "1.3"-style version, Go's cipher suite name (the IANA name .NET uses), the client certificate PEM
    // under verified_chains when it was verified, else under certs.
    private static CalloutClientTls Describe(ITlsConnectionFeature tls)
    {
        var described = new CalloutClientTls
        {
            Version = tls.Protocol switch
            {
                SslProtocols.Tls13 => "1.3",
                SslProtocols.Tls12 => "1.2",
                var other => other.ToString(),
            },
            Cipher = tls.CipherSuite.ToString(),
        };
        if (tls.ClientCertificate is { } certificate)
        {
            var pem = Pem(certificate);
            if (tls.ClientCertificateRequired)
            {
                described.VerifiedChains = [[pem]];
            }
            else
            {
                described.Certs = [pem];
            }
        }

        return described;
    }

    private static string Pem(X509Certificate2 certificate) => certificate.ExportCertificatePem() + "\n";
}
