using System.Buffers;
using System.Net;
using Broker.Abstractions;
using Broker.Core.Internal.Auth;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// A protocol adapter's connection as a client of the broker (<see cref="IBusConnection"/>): an in-process client bound
/// to an authenticated user (<c>.Connect.cs</c>, permissions checked in <c>.Permissions.cs</c>), listed in /connz like a
/// NATS connection, with deliveries written into the connection's output and flushed once per producer batch
/// (<c>.Output.cs</c>), and closed by the adapter or by the broker (<c>.Close.cs</c>).
/// </summary>
internal sealed partial class BusConnection : InProcessClient, IBusConnection, IClientConnection
{
    private readonly TransportConnection connection;
    // Made with the first output subscription's delivery or WriteOutput, or by the close (whose graceful end completes
    // the transport's writer through it): an adapter that writes its own output, as MQTT's, never has one while it
    // lives (about 170 B with its lock, issue 25).
    private ConnectionOutput? lazyOutput;
    private long lastActivity = Environment.TickCount64;

    private BusConnection(BrokerCore server, TransportConnection connection, BusConnectOptions options, Credentials credentials, AuthenticatedUser? user)
        : base(server, options.Name, options.Echo, ClientKind.Client, options.DeferFlush)
    {
        this.connection = connection;
        this.credentials = credentials;
        Protocol = options.Protocol;
        AuthorizedUser = user?.Name;
        Permissions = user?.Permissions?.CreateForConnection();
    }

    public ulong ConnectionId => Id;

    public string Protocol { get; }

    public string? User => AuthorizedUser;

    public string ConnectionType => Protocol;

    // Read from the connection when asked (monitoring, logs, a reload's certificate check): fields of their own were
    // 24 B on every adapter connection, with the logger's (issue 25).
    public IPEndPoint? RemoteEndPoint => connection.RemoteEndPoint as IPEndPoint;

    public ITlsConnectionFeature? Tls => connection.Features.Get<ITlsConnectionFeature>();

    public TimeSpan RoundTrip => TimeSpan.Zero;

    /// <summary>What the transport has not sent yet, plus what waits for this client's handlers.</summary>
    public long PendingBytes => (connection.Features.Get<IPendingOutputFeature>()?.PendingOutputBytes ?? 0) + QueuedBytes;

    public string? Lang => null;

    public string? ClientVersion => null;

    /// <summary>The last publish, subscription change, write or flush of the adapter.</summary>
    public long LastActivityTick => Volatile.Read(ref lastActivity);

    protected override int SubscriptionLimit => Server.Options.MaxSubscriptions;

    public ReadOnlySpan<byte> PublishMapped(ReadOnlySpan<byte> subject, scoped ReadOnlySpan<byte> replyTo, scoped in ReadOnlySequence<byte> headers, scoped in ReadOnlySequence<byte> payload)
        => PublishCore(subject, subject, replyTo, headers, payload, flushNow: false);

    public override string ToString() => $"{Protocol} cid:{Id} {RemoteEndPoint}";

    private ILogger logger => Server.ClientLogger;

    private ConnectionOutput output => Volatile.Read(ref lazyOutput) ?? MakeOutput();

    private ConnectionOutput MakeOutput()
    {
        var made = new ConnectionOutput(connection, connection.Transport.Output);
        return Interlocked.CompareExchange(ref lazyOutput, made, null) ?? made;
    }

    private void MarkActivity() => Volatile.Write(ref lastActivity, Environment.TickCount64);
}
