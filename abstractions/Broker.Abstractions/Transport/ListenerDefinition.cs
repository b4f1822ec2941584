using System.Net;

namespace Broker.Abstractions;

/// <summary>
/// A port the broker listens on and what serves it. The broker creates one for its NATS client port;
/// plugins register more in their services.
/// </summary>
public sealed record ListenerDefinition
{
    /// <summary>A unique name, used in logs and to look up the bound endpoint (the client port is <c>"client"</c>).</summary>
    public required string Name { get; init; }

    /// <summary>Where to listen. Port 0 picks a free port.</summary>
    public required EndPoint EndPoint { get; init; }

    /// <summary>The <see cref="IProtocolHandler.Protocol"/> that serves accepted connections. Default <c>"nats"</c>.</summary>
    public string Protocol { get; init; } = "nats";

    /// <summary>The <see cref="IConnectionListenerFactory.Name"/> that binds it. Default <c>"tcp"</c>.</summary>
    public string Transport { get; init; } = "tcp";

    /// <summary>Names of <see cref="IConnectionMiddleware"/> run in order on each accepted connection. Default none.</summary>
    public IReadOnlyList<string> Middleware { get; init; } = [];
}
