using System.Net;
using System.Runtime.CompilerServices;
using Broker.Abstractions;
using Broker.Core.Internal.Protocol;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// A NATS client connection, the owner the server talks to: one read loop parsing the input pipe (<see cref="ClientReadLoop"/>),
/// operation handlers (<c>.Operations.cs</c>, <c>.Connect.cs</c>), deliveries written straight into the output under
/// its lock and flushed once per producer batch (<c>.Output.cs</c>, <see cref="ConnectionOutput"/>) and closing
/// (<c>.Close.cs</c>). It delegates to collaborators with their own state: <see cref="ConnectOptions"/> (what CONNECT
/// asked for), <see cref="ClientAuthentication"/> (nonce, credentials, deadline), <see cref="KeepAlive"/> (ping timer,
/// round trip, last input), <see cref="UserClaims"/> (user JWT, expiry, claims updates),
/// <see cref="CalloutConnection"/> (CONNECT through the authorization callout), <see cref="ProtocolTrace"/>
/// (<c>-V</c>), <see cref="ClientTransport"/> (pipes, endpoints, TLS) and <see cref="MessageFrame"/> (the MSG/HMSG
/// line); the subscription table is <see cref="ClientBase"/>'s.
/// </summary>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1001", Justification = "The timers' owners (authentication, keep-alive, user claims) are disposed when the read loop ends (CleanupAsync); the client has no other owner.")]
internal sealed partial class NatsClient : ClientBase, IClientConnection, IKeepAliveConnection
{
    private readonly ILogger logger;
    private readonly ConnectionOutput output;
    private readonly ClientTransport transport;

    private readonly ConnectOptions options = new();
    private readonly ClientAuthentication authentication;
    private readonly KeepAlive keepAlive;
    private readonly ProtocolTrace trace;
    private readonly UserClaims claims;
    private readonly ClientReadLoop reader;

    // Made at the first CONNECT the authorization callout intercepts.
    private CalloutConnection? callout;

    // Set by a CONNECT into an account whose change the plugins are applying; taken by the read loop.
    private Task? settling;

    /// <summary>CONNECT through the authorization callout, once one was intercepted; otherwise null.</summary>
    internal CalloutConnection? Callout => callout;

    public NatsClient(BrokerCore server, TransportConnection connection)
        : base(server, ClientKind.Client)
    {
        ArgumentNullException.ThrowIfNull(connection);
        output = new ConnectionOutput(connection, connection.Transport.Output);
        transport = new ClientTransport(connection, output);
        logger = server.ClientLogger;
        authentication = new ClientAuthentication(server.Authenticator.AuthRequired, transport.Tls);
        keepAlive = new KeepAlive(this);
        trace = new ProtocolTrace(logger, transport.RemoteEndPoint, Id);
        claims = new UserClaims(this, logger);
        reader = new ClientReadLoop(this, transport, keepAlive, trace, claims, logger);
    }

    /// <summary>Runs the connection (<see cref="ClientReadLoop"/>) until it ends.</summary>
    public Task RunAsync(CancellationToken cancellationToken) => reader.RunAsync(cancellationToken);

    /// <summary>Wakes the read loop's pending (or next) read, which then sees the stop token (server shutdown).</summary>
    public void CancelPendingRead() => transport.Input.CancelPendingRead();

    public IPEndPoint? RemoteEndPoint => transport.RemoteEndPoint;

    /// <summary>TLS on this connection (established, or to be started after INFO), or <see langword="null"/>.</summary>
    public ITlsConnectionFeature? Tls => transport.Tls;

    public string? Lang => options.Lang;

    public string? ClientVersion => options.Version;

    /// <summary>Whether only CONNECT is acceptable next (authentication pending and no <c>no_auth_user</c>); forced inline for the precompiled publish path (ArgumentSplitter.IsSeparator says why).</summary>
    internal bool ConnectRequired { [MethodImpl(MethodImplOptions.AggressiveInlining)] get => !authentication.IsAuthenticated && !Server.Authenticator.HasNoAuthUser; }

    public override string ToString() => $"cid:{Id} {RemoteEndPoint}";
}
