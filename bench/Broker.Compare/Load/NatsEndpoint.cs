using System.Net;
using System.Security.Cryptography.X509Certificates;

namespace Broker.Compare.Load;

/// <summary>What the load generator's connections carry the NATS protocol over.</summary>
internal enum NatsTransport
{
    /// <summary>The bare TCP socket (the NATS port).</summary>
    Tcp,

    /// <summary>
    /// The NATS port with nats-server's upgrade: INFO in clear text with <c>tls_required</c>, then the TLS
    /// handshake on the same socket.
    /// </summary>
    Tls,

    /// <summary>The WebSocket port (<c>ws://</c>): NATS bytes in binary frames.</summary>
    WebSocket,
}

/// <summary>
/// Where and how a workload's connections reach the server under test: the address of the listener the transport
/// needs (the NATS port or the WebSocket port) and, for TLS, the certificate the server must present.
/// </summary>
/// <param name="Address">The listener's address.</param>
/// <param name="Transport">What the connection speaks over the socket; default bare TCP.</param>
internal sealed record NatsEndpoint(IPEndPoint Address, NatsTransport Transport = NatsTransport.Tcp)
{
    /// <summary>
    /// For <see cref="NatsTransport.Tls"/>: the only certificate accepted from the server (the harness's own
    /// self-signed one, so no chain or name validation is needed). Default <see langword="null"/>.
    /// </summary>
    public X509Certificate2? PinnedCertificate { get; init; }

    /// <summary>
    /// For a row across a leaf node link: the other server of the pair, where the subscribers connect (the publishers
    /// connect to this one). Default <see langword="null"/>: everything connects here.
    /// </summary>
    public NatsEndpoint? SubscriberServer { get; init; }

    /// <summary>Where the workload's subscribers connect: <see cref="SubscriberServer"/>, or this server.</summary>
    public NatsEndpoint Subscribers => SubscriberServer ?? this;

    public override string ToString() => Transport == NatsTransport.Tcp ? Address.ToString() : $"{Transport} {Address}";
}
