using System.Collections.ObjectModel;
using System.Net;
using Microsoft.Extensions.Configuration;

namespace Broker.Abstractions;

/// <summary>
/// A port the broker listens on and what serves it. The broker creates one for its NATS client port;
/// plugins register more in their services, and <see cref="IListenerConfigurator"/>s may adjust any of them
/// before they are bound.
/// </summary>
/// <remarks>
/// The broker places the (adjusted) definition in <see cref="TransportConnection.Features"/> of every connection it
/// accepts, before middleware runs, so middleware and protocol handlers can tell which listener a connection came from.
/// </remarks>
public sealed record ListenerDefinition
{
    private static readonly IReadOnlyDictionary<string, IConfiguration> NoConfiguration =
        new ReadOnlyDictionary<string, IConfiguration>(new Dictionary<string, IConfiguration>());

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

    /// <summary>
    /// Settings for named middleware on this listener only, keyed by <see cref="IConnectionMiddleware.Name"/>: for
    /// example the WebSocket listener hands its own <c>tls</c> section to the <c>"tls"</c> middleware. A middleware
    /// with no entry here uses its plugin's configuration. Default empty.
    /// </summary>
    public IReadOnlyDictionary<string, IConfiguration> MiddlewareConfiguration { get; init; } = NoConfiguration;
}
