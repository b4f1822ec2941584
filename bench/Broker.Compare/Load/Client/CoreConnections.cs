using System.Threading.Channels;
using NATS.Client.Core;

namespace Broker.Compare.Load.Client;

/// <summary>
/// Connections of NATS.Client.Core (the .NET client applications run) to the server under test, over the row's
/// transport: <c>nats://</c>, <c>tls://</c> (the harness certificate pinned) or <c>ws://</c>. Settings are the
/// client's defaults except where a benchmark must not lose or retry anything: subscriptions wait instead of
/// dropping messages when the application falls behind, and nothing reconnects (<see cref="CoreRun"/>, which opens
/// the connections and fails the run when one is lost).
/// </summary>
internal static class CoreConnections
{
    /// <summary>The options of a connection named <paramref name="name"/> to <paramref name="server"/>; <see cref="CoreRun.ConnectAsync"/> opens it.</summary>
    public static NatsOpts Options(NatsEndpoint server, string name)
    {
        ArgumentNullException.ThrowIfNull(server);
        var address = server.Address;
        return NatsOpts.Default with
        {
            Name = name,
            Url = server.Transport switch
            {
                NatsTransport.Tls => $"tls://{address}",
                NatsTransport.WebSocket => $"ws://{address}",
                _ => $"nats://{address}",
            },
            // Only bounds the retries after a failed reconnect (0 would be no bound); CoreRun refuses every one.
            MaxReconnectRetry = 1,
            ConnectTimeout = TimeSpan.FromSeconds(10),
            RequestTimeout = TimeSpan.FromSeconds(30),
            CommandTimeout = TimeSpan.FromSeconds(30),
            SubPendingChannelFullMode = BoundedChannelFullMode.Wait,
            TlsOpts = server.Transport == NatsTransport.Tls ? PinnedTls(server) : NatsTlsOpts.Default,
        };
    }

    // Only the harness's own self-signed certificate is accepted (no chain or name to validate).
    private static NatsTlsOpts PinnedTls(NatsEndpoint server)
    {
        var pinned = server.PinnedCertificate ?? throw new InvalidOperationException("A TLS row needs the server's certificate.");
        return new NatsTlsOpts
        {
            Mode = TlsMode.Require,
            ConfigureClientAuthentication = authentication =>
            {
                authentication.RemoteCertificateValidationCallback = (_, certificate, _, _) =>
                    certificate is not null && certificate.GetCertHash().AsSpan().SequenceEqual(pinned.GetCertHash());
                return default;
            },
        };
    }
}
