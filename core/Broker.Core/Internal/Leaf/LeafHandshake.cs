using System.IO.Pipelines;
using System.Net.Security;
using System.Net.Sockets;
using System.Net;
using System.Text.Json;
using System.Text;
using Broker.Abstractions;
using Broker.Core.Auth;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Auth;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Transport;

namespace Broker.Core.Internal.Leaf;

/// <summary>What the hub learnt of a spoke in the handshake: who it is, the account its user binds, its permissions.</summary>
/// <param name="Name">The spoke's server name (<c>name</c>), by which a reconnect replaces its older link.</param>
/// <param name="Cluster">The spoke's cluster name, if it is in one.</param>
/// <param name="Account">The account the link is bound to.</param>
/// <param name="Headers">Whether both ends support headers.</param>
/// <param name="Permissions">The link's permissions (the leaf user's, reversed).</param>
/// <param name="ConnectInfo">The connect-info INFO line to send before the interest.</param>
internal sealed record LeafSpoke(string Name, string? Cluster, Account Account, bool Headers, LeafPermissions Permissions, byte[] ConnectInfo);

/// <summary>A spoke that passed the handshake, with its link's started transport.</summary>
internal sealed record LeafAccepted(LeafSpoke Spoke, LeafTransport Transport);

/// <summary>
/// The hub's side of a spoke's handshake (nats-server's <c>createLeafNode</c> for an accepted connection and
/// <c>processLeafNodeConnect</c>): the first INFO with a nonce, the CONNECT read within the authorization timeout,
/// authentication (the <c>leafnodes.authorization</c> user or users, else the broker's client users, NKeys or JWTs)
/// and the binding to the user's account. Any failure sends nats-server's -ERR and ends the connection.
/// </summary>
internal static class LeafHandshake
{
    private const int MaxConnectLine = 64 * 1024;

    // nats-server's ErrTooManyAccountConnections, which a leaf node link over its account's limit is told.
    private const string TooManyLinks = "maximum account active connections exceeded";

    /// <summary>
    /// Runs the handshake over <paramref name="socket"/>, then TLS when <paramref name="tls"/> is given; the spoke and
    /// the link's started transport (owning the socket, what followed the CONNECT its first input), or null when the
    /// connection was refused (and closed).
    /// </summary>
    public static async Task<LeafAccepted?> AcceptAsync(BrokerCore server, LeafHubInfo template, LeafHubTls? tls, Socket socket, TransportSettings settings, CancellationToken stopping)
    {
        var options = server.Options.LeafNodes.Hub;
        var nonce = Authenticator.CreateNonce();
        var info = template.Clone();
        info.ClientId = server.NextClientId();
        info.Nonce = nonce;
        var peer = socket.RemoteEndPoint?.ToString() ?? "?";
        await socket.SendAsync(info.ToProtocolLine(), SocketFlags.None, stopping).ConfigureAwait(false);

        // createLeafNode: INFO in clear text, then the spoke starts TLS (a spoke that does not is closed).
        Stream stream = new NetworkStream(socket, ownsSocket: tls is not null);
        if (tls is not null)
        {
            try
            {
                stream = await tls.AuthenticateAsync(stream, stopping).ConfigureAwait(false);
            }
            catch (LinkException ex)
            {
                if (ex.Message == LeafHubTls.TimedOut)
                {
                    LeafLog.SpokeRefused(server.Logger, peer, ex.Message);
                }
                else
                {
                    LeafLog.TlsFailed(server.Logger, peer, ex.Message);
                }

                socket.Dispose();
                return null;
            }
        }

        byte[]? line;
        byte[] rest;
        using (var timeout = CancellationTokenSource.CreateLinkedTokenSource(stopping))
        {
            timeout.CancelAfter(options.AuthTimeout);
            (line, rest) = await ReadLineAsync(stream, timeout.Token).ConfigureAwait(false);
        }

        var spoke = line is null
            ? Refuse(server, stream, socket, peer, "Authentication Timeout", "Authentication Timeout")
            : Connect(server, options, info, template, line, stream, socket, peer);
        if (spoke is null)
        {
            return null;
        }

        TransportConnection connection;
        if (stream is SslStream ssl)
        {
            var secure = new LeafStreamConnection(ssl, settings, socket.LocalEndPoint, socket.RemoteEndPoint, rest);
            secure.Start();
            connection = secure;
        }
        else
        {
            var plain = new SocketConnection(socket, settings, owner: null, PipeScheduler.ThreadPool);
            plain.Preload(rest);
            plain.Start();
            connection = plain;
        }

        return new LeafAccepted(spoke, new LeafTransport(connection, Tls: tls is not null, WebSocket: false));
    }

    // processLeafNodeConnect: the CONNECT checked, the spoke authenticated and bound to its user's account.
    private static LeafSpoke? Connect(BrokerCore server, LeafHubOptions options, LeafHubInfo info, LeafHubInfo template, byte[] line, Stream stream, Socket socket, string peer)
    {
        var text = line.AsSpan();
        if (text.Length < 8 || !System.Text.Ascii.EqualsIgnoreCase(text[..8], "CONNECT "u8))
        {
            return Refuse(server, stream, socket, peer, "Authorization Violation", "authentication error");
        }

        LeafConnect? connect;
        try
        {
            connect = JsonSerializer.Deserialize(text[8..], LeafJsonContext.Default.LeafConnect);
        }
        catch (JsonException)
        {
            connect = null;
        }

        if (connect is null)
        {
            return Refuse(server, stream, socket, peer, "Protocol Error", "malformed CONNECT");
        }

        if (connect.Lang is not null)
        {
            // A client dialled the leaf port (nats-server's ErrClientConnectedToLeafNodePort).
            return Refuse(server, stream, socket, peer, "attempted to connect to leaf node port", "attempted to connect to leaf node port");
        }

        if (connect.Gateway is { } gateway)
        {
            var error = $"Rejecting connection from gateway \"{gateway}\" on the leafnode port";
            return Refuse(server, stream, socket, peer, error, error);
        }

        var user = Authenticate(server, options, connect, info.Nonce ?? string.Empty, (socket.RemoteEndPoint as IPEndPoint)?.Address);
        if (user is null || !server.Accounts.TryGet(user.Account, out var account))
        {
            return Refuse(server, stream, socket, peer, "Authorization Violation", "authentication error");
        }

        if (account.Limits.MaxLeafNodes >= 0 && (account.SubList.Observer?.Links.Length ?? 0) >= account.Limits.MaxLeafNodes)
        {
            // registerWithAccount: the account's leaf node links are at its limit (max_leafnodes, a JWT's limits.leaf;
            // 0: none at all). A user of the leaf block fails its user check with it (registerLeafWithAccount).
            var error = string.IsNullOrEmpty(options.User) && options.Users.Count == 0 ? TooManyLinks : "Authorization Violation";
            return Refuse(server, stream, socket, peer, error, TooManyLinks);
        }

        // nats-server's connect-info INFO: the user's subscribe permission is what the spoke may import, its publish
        // what the spoke may export.
        var publish = LeafInfo.SubjectPermission.From(user.Permissions?.Source.Publish);
        var subscribe = LeafInfo.SubjectPermission.From(user.Permissions?.Source.Subscribe);
        var connectInfo = template.Clone();
        connectInfo.ClientId = info.ClientId;
        connectInfo.ConnectInfo = true;
        connectInfo.Import = subscribe;
        connectInfo.Export = publish;
        connectInfo.RemoteAccount = account.Name;
        // addLeafNodeConnection's blockMappingOutgoing: a spoke of another JetStream domain is never sent requests for ours.
        var domainDeny = LeafPermissions.DomainDeny(server.JetStreamDomain, connect.Domain, account.IsSystem);
        if (domainDeny is not null)
        {
            LeafLog.DomainDeny(server.Logger, domainDeny, account.Name);
        }

        var permissions = LeafPermissions.ForSpoke(publish, subscribe, connect.DenyPublish, account.IsSystem, domainDeny);
        var headers = connect.Headers && !server.Options.NoHeaderSupport;
        return new LeafSpoke(connect.Name ?? string.Empty, connect.Cluster, account, headers, permissions, connectInfo.ToProtocolLine());
    }

    // nats-server's isLeafNodeAuthorized: the leafnodes block's single user, else its users (each bound to its
    // account), else the broker's client authentication. nats-server admits a spoke without matching credentials
    // when only a single client user or a token is configured; the broker checks them (docs/scale-out.md).
    private static AuthenticatedUser? Authenticate(BrokerCore server, LeafHubOptions options, LeafConnect connect, string nonce, IPAddress? host)
    {
        if (!string.IsNullOrEmpty(options.User))
        {
            return connect.User == options.User && Authenticator.CheckSecret(options.Password ?? string.Empty, connect.Password)
                ? new AuthenticatedUser(options.User, null, BoundAccount(options.Account))
                : null;
        }

        if (options.Users.Count > 0)
        {
            var user = options.Users.FirstOrDefault(u => u.User == connect.User);
            return user is not null && Authenticator.CheckSecret(user.Password ?? string.Empty, connect.Password)
                ? new AuthenticatedUser(user.User, null, BoundAccount(user.Account))
                : null;
        }

        var authenticator = server.Authenticator;
        var nonceBytes = Encoding.ASCII.GetBytes(nonce);
        if (authenticator.ChecksJwt)
        {
            return authenticator.AuthenticateJwt(connect.Jwt, connect.Signature, nonceBytes, host, "LEAFNODE", DateTimeOffset.UtcNow, out _);
        }

        if (authenticator.ChecksNkey(connect.Nkey))
        {
            return authenticator.AuthenticateNkey(connect.Nkey!, connect.Signature, nonceBytes, out _);
        }

        if (!authenticator.AuthRequired)
        {
            return new AuthenticatedUser(null, null, BoundAccount(options.Account));
        }

        // A 2.9 spoke sends a URL's token as its user (it has no auth_token field).
        var token = connect.AuthToken ?? (string.IsNullOrEmpty(connect.Password) ? connect.User : null);
        return authenticator.Authenticate(connect.User, connect.Password, token);
    }

    private static string BoundAccount(string? account) => string.IsNullOrEmpty(account) ? Account.GlobalName : account;

    private static LeafSpoke? Refuse(BrokerCore server, Stream stream, Socket socket, string peer, string error, string reason)
    {
        LeafLog.SpokeRefused(server.Logger, peer, reason);
        try
        {
            stream.Write(Encoding.UTF8.GetBytes($"-ERR '{error}'\r\n"));
            stream.Flush();
            socket.Shutdown(SocketShutdown.Both);
        }
        catch (Exception ex) when (ex is IOException or SocketException or ObjectDisposedException or InvalidOperationException or NotSupportedException)
        {
            // The spoke went first.
        }

        stream.Dispose();
        socket.Dispose();
        return null;
    }

    // The CONNECT line, and what came after it (the link's reader starts there). A null line when the time ran out,
    // the spoke closed, or the line is too long.
    private static async Task<(byte[]? Line, byte[] After)> ReadLineAsync(Stream stream, CancellationToken cancellation)
    {
        var buffer = new byte[4096];
        var length = 0;
        try
        {
            while (true)
            {
                var end = buffer.AsSpan(0, length).IndexOf("\r\n"u8);
                if (end >= 0)
                {
                    return (buffer[..end], buffer[(end + 2)..length]);
                }

                if (length == MaxConnectLine)
                {
                    return (null, []);
                }

                if (length == buffer.Length)
                {
                    Array.Resize(ref buffer, Math.Min(buffer.Length * 2, MaxConnectLine));
                }

                var read = await stream.ReadAsync(buffer.AsMemory(length), cancellation).ConfigureAwait(false);
                if (read == 0)
                {
                    return (null, []);
                }

                length += read;
            }
        }
        catch (Exception ex) when (ex is OperationCanceledException or IOException or SocketException or ObjectDisposedException)
        {
            return (null, []);
        }
    }
}
