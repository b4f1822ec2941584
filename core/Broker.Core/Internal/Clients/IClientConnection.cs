using System.Net;
using Broker.Abstractions;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// A client that is a connection of someone outside the process: a NATS connection (<see cref="NatsClient"/>) or a
/// protocol adapter's connection (<see cref="BusConnection"/>). These are what /connz lists, /varz counts,
/// <c>max_connections</c> limits and lame duck mode closes; plain in-process clients are not, as nats-server keeps its internal clients out of them.
/// </summary>
internal interface IClientConnection
{
    /// <summary>The connection id (<c>cid</c>).</summary>
    ulong Id { get; }

    /// <summary>/connz <c>type</c>: <c>nats</c>, or the adapter's protocol name.</summary>
    string ConnectionType { get; }

    IPEndPoint? RemoteEndPoint { get; }

    /// <summary>TLS on the connection, or <see langword="null"/>.</summary>
    ITlsConnectionFeature? Tls { get; }

    /// <summary>The last measured round trip (NATS PING/PONG); zero when unknown.</summary>
    TimeSpan RoundTrip { get; }

    /// <summary>Bytes waiting to be sent to the peer.</summary>
    long PendingBytes { get; }

    string? Lang { get; }

    string? ClientVersion { get; }

    /// <summary>When the peer last did something, as <see cref="Environment.TickCount64"/>.</summary>
    long LastActivityTick { get; }

    /// <summary>Why the connection closed, in nats-server's words; empty while open.</summary>
    string ClosedReasonText { get; }

    DateTimeOffset? ClosedAt { get; }

    /// <summary>Closes the connection gracefully with the reason "Server Shutdown" (lame duck mode, stop).</summary>
    void CloseForShutdown();

    /// <summary>
    /// Closes the connection with the reason "Maximum Connections Exceeded" (a reload lowered <c>max_connections</c>
    /// below the connections open), telling the peer as a refused connection is told.
    /// </summary>
    void CloseForMaxConnections();
}
