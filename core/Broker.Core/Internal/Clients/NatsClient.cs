using System.IO.Pipelines;
using System.Net;
using Broker.Abstractions;
using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Protocol;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// A NATS client connection: one read loop parsing the input pipe (<c>.Read.cs</c>), operation handlers
/// (<c>.Operations.cs</c>, <c>.Connect.cs</c>), deliveries written straight into the output under its lock and
/// flushed once per producer batch (<c>.Output.cs</c>, <see cref="ConnectionOutput"/>), ping and auth timers (<c>.Timers.cs</c>) and closing
/// (<c>.Close.cs</c>).
/// </summary>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1001", Justification = "Timers are disposed when the read loop ends (CleanupAsync); the client has no other owner.")]
internal sealed partial class NatsClient : ClientBase, IClientConnection
{
    private readonly TransportConnection connection;
    private readonly ILogger logger;

    // The input is replaced once, and the output's writer under its lock, when TLS is started after INFO (see .Tls.cs).
    private PipeReader input;
    private readonly ConnectionOutput output;

    // Parser scratch for a control line that straddles two buffer segments.
    private readonly byte[] scratch;

    // nats-server's defaults before CONNECT: verbose and pedantic on.
    private bool verbose = true;
    private bool pedantic = true;
    private bool authenticated;
    private int protocol;

    public NatsClient(BrokerCore server, TransportConnection connection)
        : base(server, ClientKind.Client)
    {
        this.connection = connection;
        input = connection.Transport.Input;
        output = new ConnectionOutput(connection, connection.Transport.Output);
        logger = server.ClientLogger;
        scratch = new byte[server.Options.MaxControlLine + ProtocolParser.ControlLineAllowance + 2];
        RemoteEndPoint = connection.RemoteEndPoint as IPEndPoint;
        Listener = connection.Features.Get<ListenerDefinition>();
        Tls = connection.Features.Get<ITlsConnectionFeature>();
        authenticated = !server.Authenticator.AuthRequired;
        RefreshTracing();
    }

    public IPEndPoint? RemoteEndPoint { get; }

    /// <summary>The listener the connection was accepted on, when the broker's listener host set it.</summary>
    public ListenerDefinition? Listener { get; }

    /// <summary>TLS on this connection (established, or to be started after INFO), or <see langword="null"/>.</summary>
    public ITlsConnectionFeature? Tls { get; }

    /// <summary>The local endpoint the client connected to.</summary>
    public EndPoint? LocalEndPoint => connection.LocalEndPoint;

    public string? Lang { get; private set; }

    public string? ClientVersion { get; private set; }

    /// <summary>Whether only CONNECT is acceptable next (authentication pending and no <c>no_auth_user</c>).</summary>
    private bool ConnectRequired => !authenticated && Server.Options.Authorization.NoAuthUser is null;

    public override string ToString() => $"cid:{Id} {RemoteEndPoint}";
}
