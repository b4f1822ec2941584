using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using Broker.Abstractions;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Leaf;

/// <summary>
/// One leaf node link (nats-server's <c>LEAF</c> client). Solicited (a <see cref="LeafRemote"/>, the broker the
/// spoke): the handshake is <see cref="LeafSpokeHandshake"/>'s (the hub's INFO, our CONNECT without <c>lang</c>, the
/// hub's connect-info INFO with our permissions), then our interest. Accepted (<see cref="LeafHub"/>, the broker the
/// hub): the handshake is done by <see cref="LeafHandshake"/>, the link sends the connect-info INFO and its interest.
/// Either way the other side's interest (<see cref="LeafPeerInterest"/>) becomes subscriptions of this client in the
/// bound account (one per <c>subject</c> or <c>subject queue</c> key), its messages are published into the account,
/// ours are sent as LMSG/HMSG. Reading is in LeafConnection.Read.cs, writing in LeafConnection.Output.cs.
/// </summary>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1001", Justification = "The transport is disposed when RunAsync ends; the link has no other owner.")]
internal sealed partial class LeafConnection : LinkClient, IInterestLink
{
    private readonly LeafRemote? remote;
    private readonly LeafHub? hub;
    private readonly LeafInterest interest;
    private readonly Uri url;
    private readonly TransportConnection connection;
    private readonly ConnectionOutput output;
    private readonly TaskCompletionSource done = new(TaskCreationOptions.RunContinuationsAsynchronously);

    private readonly LeafPeerInterest peer;
    private readonly LeafSpokeHandshake? handshake;

    private volatile LeafPermissions permissions;
    private int closed;
    private volatile bool established;

    public LeafConnection(BrokerCore server, LeafRemote remote, LeafInterest interest, LeafTransport transport, Uri url)
        : this(server, remote, interest, transport, url, LeafPermissions.Create(remote.Options, interest.Account.IsSystem))
    {
    }

    /// <summary>A link a spoke opened to this broker as its hub, after <see cref="LeafHandshake"/>.</summary>
    public LeafConnection(BrokerCore server, LeafHub hub, LeafInterest interest, LeafTransport transport, LeafSpoke spoke)
        : this(server, null, interest, transport, new Uri("nats-leaf://" + transport.Connection.RemoteEndPoint), spoke.Permissions)
    {
        this.hub = hub;
        Spoke = spoke;
        SupportsHeaders = spoke.Headers;
        HubName = spoke.Name;
    }

    private LeafConnection(BrokerCore server, LeafRemote? remote, LeafInterest interest, LeafTransport transport, Uri url, LeafPermissions permissions)
        : base(server, ClientKind.Leaf, interest.Account)
    {
        this.remote = remote;
        this.interest = interest;
        this.url = url;
        Echo = false;
        this.permissions = permissions;
        connection = transport.Connection;
        output = new ConnectionOutput(connection, connection.Transport.Output);
        RemoteEndPoint = connection.RemoteEndPoint as IPEndPoint;
        peer = new LeafPeerInterest(this, interest);
        handshake = remote is null ? null : new LeafSpokeHandshake(this, remote, transport, url);
    }

    /// <summary>The hub's address.</summary>
    public IPEndPoint? RemoteEndPoint { get; }

    /// <summary>The other side's server name: the hub's (its id when it sends none), or the spoke's for an accepted link.</summary>
    public string HubName { get; private set; } = string.Empty;

    /// <summary>What the link may carry: the hub's permissions (and <c>deny_*</c>), or the spoke user's reversed.</summary>
    internal LeafPermissions LinkPermissions
    {
        get => permissions;
        set => permissions = value;
    }

    /// <summary>The account the hub bound the link to, when it said (<c>remote_account</c>).</summary>
    public string? RemoteAccount { get; internal set; }

    /// <summary>The spoke of a link this broker accepted as the hub; null for a solicited link.</summary>
    public LeafSpoke? Spoke { get; }

    /// <summary>Whether the link was accepted (the broker is the hub) rather than solicited.</summary>
    public bool IsAccepted => remote is null;

    /// <summary>Whether the handshake finished and interest flows.</summary>
    public bool IsEstablished => established;

    public override bool IsClosed => Volatile.Read(ref closed) != 0;

    /// <summary>Completes when the link has closed.</summary>
    public Task Done => done.Task;

    /// <summary>The other side's interest now: keys with their weights (1 for plain subscriptions).</summary>
    public KeyValuePair<string, int>[] RemoteInterest() => peer.Snapshot();

    /// <summary>The other side's weight for an interest key (1 for a plain subject), 0 when it has none.</summary>
    public int WeightOf(string key) => peer.WeightOf(key);

    /// <summary>Runs the link until it closes: starts the transport, reads, and closes on a fault or end of input.</summary>
    public async Task RunAsync(CancellationToken stopping)
    {
        using var registration = stopping.Register(static state => ((LeafConnection)state!).Close("Server Shutdown"), this);
        if (Spoke is { } spoke)
        {
            // processLeafNodeConnect: the connect-info INFO, then the interest.
            SendProtocol(spoke.ConnectInfo);
            hub!.Added(this, spoke);
            Establish();
        }
        else
        {
            handshake!.Start();
        }

        try
        {
            await ReadLoopAsync(connection.Transport.Input).ConfigureAwait(false);
            Close("Client Closed");
        }
        catch (Exception ex) when (ex is IOException or SocketException or ObjectDisposedException or InvalidOperationException or OperationCanceledException)
        {
            Close("Read Error: " + ex.Message);
        }
        catch (LeafProtocolException ex)
        {
            Close("Protocol Error: " + ex.Message);
        }
        catch (JsonException ex)
        {
            Close("Protocol Error: " + ex.Message);
        }

        await done.Task.ConfigureAwait(false);
        await connection.DisposeAsync().ConfigureAwait(false);
    }

    private LinkKeepAlive? keepAlive;

    private void ProcessPong() => keepAlive?.Pong();

    protected internal override long RoundTripNanoseconds => keepAlive?.RoundTripNanoseconds ?? 0;

    /// <summary>The hub's first INFO: whether both ends speak headers, and the hub's name.</summary>
    internal void HubInfo(bool headers, string name)
    {
        SupportsHeaders = headers;
        HubName = name;
    }

    /// <summary>A subscription standing for a key of the other side's interest (<see cref="LeafPeerInterest"/>).</summary>
    internal void SetPeerInterest(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, ReadOnlySpan<byte> key, int weight, bool known)
        => SetInterest(subject, queue, key, weight, known);

    /// <summary>The subscription of an interest key the other side removed.</summary>
    internal void RemovePeerSubscription(ReadOnlySpan<byte> key) => Unsubscribe(key, 0);

    // The connect-info INFO came (or the hub sends none): bind, then send our interest, as leafNodeFinishConnectProcess.
    internal void Establish()
    {
        established = true;
        interest.Attach(this);
        keepAlive = new LinkKeepAlive(Server, () => IsClosed, () => SendProtocol("PING\r\n"u8), reason => Close(reason));
        _ = keepAlive.RunAsync();
        LeafLog.Connected(Server.Logger, Account.Name, Redacted, HubName);
        remote?.Connected(this);
    }

    /// <summary>
    /// Closes the link once: its subscriptions leave the account and the remote reconnects. With
    /// <paramref name="lastLine"/> (an -ERR) the output is sent before the socket goes, as nats-server flushes its error
    /// before closing; the socket is aborted a moment later at the latest.
    /// </summary>
    public void Close(string reason, string? lastLine = null)
    {
        if (Interlocked.Exchange(ref closed, 1) != 0)
        {
            return;
        }

        established = false;
        interest.Detach(this);
        hub?.Removed(this);
        RemoveAllSubscriptions();
        lock (output.Gate)
        {
            output.Complete(lastLine is null ? default : Encoding.UTF8.GetBytes(lastLine));
        }

        LeafLog.Closed(Server.Logger, Redacted, reason);
        if (lastLine is null)
        {
            connection.Abort(reason);
        }
        else
        {
            connection.Transport.Input.CancelPendingRead();
            _ = AbortLaterAsync(reason);
        }

        done.TrySetResult();
    }

    private async Task AbortLaterAsync(string reason)
    {
        await Task.Delay(TimeSpan.FromSeconds(1)).ConfigureAwait(false);
        connection.Abort(reason);
    }

    /// <summary>The URL without credentials, for logs and /leafz.</summary>
    public string Redacted => RedactedUrl(url);

    /// <summary><paramref name="url"/> without credentials.</summary>
    public static string RedactedUrl(Uri url) => url.GetLeftPart(UriPartial.Authority).Replace(url.UserInfo + "@", string.Empty, StringComparison.Ordinal);
}

/// <summary>The hub sent something this spoke cannot parse: the link closes.</summary>
internal sealed class LeafProtocolException(string message) : Exception(message);
