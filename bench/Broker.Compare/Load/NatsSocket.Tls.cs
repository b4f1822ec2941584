using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Text.Json;

namespace Broker.Compare.Load;

/// <summary>The TLS upgrade of the NATS port: INFO in clear text, then the handshake on the same socket.</summary>
internal sealed partial class NatsSocket
{
    /// <summary>
    /// Does the client side of nats-server's TLS upgrade when the INFO just read has <c>tls_required</c>. The
    /// endpoint and the server must agree: a TLS row against a server that does not ask for TLS (or the other way
    /// round) fails rather than measuring the wrong thing.
    /// </summary>
    private void StartTlsIfRequired(NatsEndpoint endPoint)
    {
        var required = InfoRequiresTls(Info);
        var wanted = endPoint.Transport == NatsTransport.Tls;
        if (required != wanted)
        {
            throw new InvalidOperationException(required
                ? $"The server at {endPoint} requires TLS (its INFO has tls_required), but the connection is clear text."
                : $"The connection to {endPoint} is meant to use TLS, but the server's INFO does not require it.");
        }

        if (!required)
        {
            return;
        }

        var pinned = endPoint.PinnedCertificate
            ?? throw new InvalidOperationException($"The TLS endpoint {endPoint} has no certificate to pin.");

        // The network stream uses the socket's send and receive timeouts for the blocking calls SslStream makes.
        var tls = new SslStream(new NetworkStream(socket, ownsSocket: false), leaveInnerStreamOpen: false);
        stream = tls;
        var options = new SslClientAuthenticationOptions
        {
            TargetHost = "localhost",
            EnabledSslProtocols = SslProtocols.Tls13,

            // The harness made the certificate itself: trusting exactly it is stricter than any chain check.
            RemoteCertificateValidationCallback = (_, certificate, _, _)
                => certificate is not null && certificate.GetRawCertData().AsSpan().SequenceEqual(pinned.RawData),
        };

        // Both servers get the same protocol and suite, so neither pays for a costlier cipher than the other. TLS
        // 1.3 with AES-128-GCM is what a Go client negotiates with a Go server on AES hardware (nats.go against
        // nats-server), so it is the representative choice. (Windows cannot restrict suites; the harness runs on
        // Linux, where it reads /proc.)
        if (!OperatingSystem.IsWindows())
        {
            options.CipherSuitesPolicy = new CipherSuitesPolicy([TlsCipherSuite.TLS_AES_128_GCM_SHA256]);
        }

        tls.AuthenticateAsClient(options);
    }

    private static bool InfoRequiresTls(string info)
    {
        using var document = JsonDocument.Parse(info);
        return document.RootElement.TryGetProperty("tls_required", out var value) && value.ValueKind == JsonValueKind.True;
    }
}
