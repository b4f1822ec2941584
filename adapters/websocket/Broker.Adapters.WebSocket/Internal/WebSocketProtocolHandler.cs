using System.Net;
using Broker.Abstractions;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Broker.Adapters.WebSocket.Internal;

/// <summary>
/// Serves the WebSocket listener: reads the upgrade request (within the handshake timeout), answers it, and hands
/// the upgraded connection to the protocol its path asks for: a path ending in <c>/mqtt</c> to the <c>"mqtt"</c>
/// protocol handler (404 while no plugin provides one, as nats-server without MQTT), anything else to <c>"nats"</c>.
/// </summary>
internal sealed class WebSocketProtocolHandler : IProtocolHandler
{
    private readonly WebSocketOptions options;
    private readonly IServiceProvider services;
    private readonly ILogger logger;
    private readonly Handshake handshake;
    private Dictionary<string, IProtocolHandler>? handlers;

    public WebSocketProtocolHandler(WebSocketOptions options, IServiceProvider services, ILogger logger)
    {
        this.options = options;
        this.services = services;
        this.logger = logger;
        handshake = new Handshake(options);
        if (options.NoTls)
        {
            WebSocketLog.NoTls(logger);
        }

        if (options.Advertise is { } advertise)
        {
            WebSocketLog.AdvertiseIgnored(logger, advertise);
        }
    }

    public string Protocol => WebSocketPlugin.ProtocolName;

    public async Task OnConnectionAsync(TransportConnection connection, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(connection);
        var remote = connection.RemoteEndPoint?.ToString() ?? "?";
        // The socket is read on demand, by the receive loop's own reads (a TCP connection's; TLS brings its own pipe):
        // one loop receives, decodes and parses in turn, as nats-server's wsReadLoop, instead of a socket receive loop
        // that hands each large read to a worker which then spins idle (the thread pool's sched_yield: three quarters
        // of our syscalls and over a third of the CPU per message of publish only under NATS.Client.Core,
        // docs/benchmarks.md "ws2"). An idle WebSocket connection then holds no receive buffer either.
        if (connection.Transport is IOnDemandTransport onDemand)
        {
            onDemand.UseOnDemandInput();
        }

        UpgradeRequest? request;
        int status;
        bool extraData;
        using (var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken))
        {
            timeout.CancelAfter(options.HandshakeTimeout);
            try
            {
                (request, status, extraData) = await UpgradeRequest.ReadAsync(connection.Transport.Input, timeout.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                WebSocketLog.HandshakeTimeout(logger, remote);
                await CloseAsync(connection, null).ConfigureAwait(false);
                return;
            }
        }

        if (request is null)
        {
            if (status != 0)
            {
                WebSocketLog.HandshakeRefused(logger, remote, "malformed or oversized request head");
            }

            await CloseAsync(connection, status == 0 ? null : Handshake.Error(status)).ConfigureAwait(false);
            return;
        }

        var protocol = request.Path.EndsWith("/mqtt", StringComparison.Ordinal) ? "mqtt" : "nats";
        handlers ??= services.GetServices<IProtocolHandler>().Where(h => h.Protocol != Protocol).ToDictionary(h => h.Protocol, StringComparer.Ordinal);
        var secure = connection.Features.Get<ITlsConnectionFeature>() is { IsEstablished: true };
        var refusal = !handlers.TryGetValue(protocol, out var handler)
            ? (404, $"{protocol} websocket endpoint not enabled")
            : handshake.Check(request, secure);
        if (refusal is null && extraData)
        {
            refusal = (400, "client sent data before handshake is complete");
        }

        if (refusal is { } error)
        {
            WebSocketLog.HandshakeRefused(logger, remote, error.Reason);
            await CloseAsync(connection, Handshake.Error(error.Status)).ConfigureAwait(false);
            return;
        }

        var compression = handshake.NegotiatesCompression(request);
        await connection.Transport.Output.WriteAsync(handshake.Accept(request, compression), cancellationToken).ConfigureAwait(false);
        WebSocketLog.Upgraded(logger, remote, request.Path, compression);

        SetCredentials(connection, request);
        var session = new WebSocketSession(
            compression,
            Browser: request["User-Agent"]?.StartsWith("Mozilla/", StringComparison.Ordinal) == true,
            options.MaxMessageSize,
            ForwardedFor(request));
        var upgraded = new WebSocketConnection(connection, session, logger);
        try
        {
            upgraded.Start();
            await handler!.OnConnectionAsync(upgraded, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            await upgraded.DisposeAsync().ConfigureAwait(false);
        }
    }

    private void SetCredentials(TransportConnection connection, UpgradeRequest request)
    {
        if (options.JwtCookie is null && options.UserCookie is null && options.PassCookie is null && options.TokenCookie is null)
        {
            return;
        }

        var cookies = request.Cookies();
        string? Cookie(string? name) => name is not null && cookies.TryGetValue(name, out var value) ? value : null;
        var credentials = new TransportCredentials
        {
            Jwt = Cookie(options.JwtCookie),
            User = Cookie(options.UserCookie),
            Password = Cookie(options.PassCookie),
            Token = Cookie(options.TokenCookie),
        };
        if (credentials.Jwt is not null || credentials.User is not null || credentials.Password is not null || credentials.Token is not null)
        {
            connection.Features.Set(credentials);
        }
    }

    /// <summary>The first address of <c>X-Forwarded-For</c> (the original client), when it is one.</summary>
    private static IPAddress? ForwardedFor(UpgradeRequest request)
    {
        var header = request["X-Forwarded-For"];
        var first = header?.Split(',')[0].Trim();
        return first is not null && IPAddress.TryParse(first, out var address) ? address : null;
    }

    private static async Task CloseAsync(TransportConnection connection, byte[]? response)
    {
        if (response is not null)
        {
            await connection.Transport.Output.WriteAsync(response).ConfigureAwait(false);
        }

        await connection.Transport.Output.CompleteAsync().ConfigureAwait(false);
        await connection.Transport.Input.CompleteAsync().ConfigureAwait(false);
    }
}
