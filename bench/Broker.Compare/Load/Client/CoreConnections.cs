using System.Threading.Channels;
using NATS.Client.Core;

namespace Broker.Compare.Load.Client;

/// <summary>
/// Connections of NATS.Client.Core (the .NET client applications run) to the server under test, over the row's
/// transport: <c>nats://</c>, <c>tls://</c> (the harness certificate pinned) or <c>ws://</c>. Settings are the
/// client's defaults except where a benchmark must not lose or retry anything: subscriptions wait instead of
/// dropping messages when the application falls behind, and nothing reconnects.
/// </summary>
internal static class CoreConnections
{
    public static async Task<NatsConnection> ConnectAsync(NatsEndpoint server, string name)
    {
        ArgumentNullException.ThrowIfNull(server);
        var address = server.Address;
        var options = NatsOpts.Default with
        {
            Name = name,
            Url = server.Transport switch
            {
                NatsTransport.Tls => $"tls://{address}",
                NatsTransport.WebSocket => $"ws://{address}",
                _ => $"nats://{address}",
            },
            MaxReconnectRetry = 0,
            ConnectTimeout = TimeSpan.FromSeconds(10),
            RequestTimeout = TimeSpan.FromSeconds(30),
            CommandTimeout = TimeSpan.FromSeconds(30),
            SubPendingChannelFullMode = BoundedChannelFullMode.Wait,
            TlsOpts = server.Transport == NatsTransport.Tls ? PinnedTls(server) : NatsTlsOpts.Default,
        };
        var connection = new NatsConnection(options);
        try
        {
            await connection.ConnectAsync().ConfigureAwait(false);
            return connection;
        }
        catch
        {
            await connection.DisposeAsync().ConfigureAwait(false);
            throw;
        }
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

    /// <summary>Runs an async workload body to completion on the thread pool, within the run's deadline.</summary>
    public static T Run<T>(Func<CancellationToken, Task<T>> body, CancellationToken cancellationToken)
    {
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(WorkloadTiming.RunTimeout);
        return Task.Run(() => body(deadline.Token), deadline.Token).GetAwaiter().GetResult();
    }
}
