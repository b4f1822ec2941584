using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Monitoring.Models;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Monitoring;

/// <summary>
/// Reads a connection's state into /connz's <see cref="ConnInfo"/> (nats-server <c>ConnInfo.fill</c>). Reads race
/// with the connection's own threads; each number is read atomically, the set of them is a near-instant view.
/// </summary>
internal static class ConnectionSnapshot
{
    /// <summary>The view of an open connection (a <see cref="ClientBase"/> that is an <see cref="IClientConnection"/>) at <paramref name="now"/>.</summary>
    public static ConnInfo Open(ClientBase client, DateTime now)
    {
        var info = Common(client, (IClientConnection)client);
        var lastActivity = now - TimeSpan.FromMilliseconds(Math.Max(Environment.TickCount64 - ((IClientConnection)client).LastActivityTick, 0));
        info.LastActivity = lastActivity;
        info.Uptime = GoFormat.Uptime(now - info.Start);
        info.Idle = GoFormat.Uptime(now - lastActivity);
        info.Subscriptions = client.SubscriptionCount;
        return info;
    }

    /// <summary>The final view of a connection that has just closed, with the subscriptions it had, as the ring keeps it.</summary>
    public static ClosedConnection Closed(ClientBase client, Subscription[] subscriptions)
    {
        var connection = (IClientConnection)client;
        var stop = connection.ClosedAt?.UtcDateTime ?? DateTime.UtcNow;
        var info = Open(client, stop);
        info.Stop = stop;

        // nats-server keeps the account's name only when it is not the global account (server.go saveClosedClient),
        // so /connz?acc=$G&state=closed finds none: the same here.
        var profile = new ClosedProfile(
            info.Type,
            info.Ip,
            connection.ClosedReasonText is { Length: > 0 } reason ? reason : null,
            info.Lang,
            info.Version,
            info.TlsVersion,
            info.TlsCipherSuite,
            info.TlsFirst,
            client.AuthorizedUser,
            client.Account.IsGlobal ? "" : client.Account.Name,
            (client as Clients.NatsClient)?.JwtUser);
        return new ClosedConnection(info, profile, Kept(subscriptions));
    }

    /// <summary>A closed connection's subscriptions as the ring keeps them, in /connz's order (by sid).</summary>
    private static ClosedSubscription[] Kept(Subscription[] subscriptions)
    {
        if (subscriptions.Length == 0)
        {
            return [];
        }

        var kept = new ClosedSubscription[subscriptions.Length];
        for (var i = 0; i < kept.Length; i++)
        {
            var s = subscriptions[i];
            kept[i] = new ClosedSubscription(s.Subject, s.Queue, s.Sid, Interlocked.Read(ref s.Delivered), s.Max);
        }

        // By sid as Details orders them (shorter first, then ordinal: UTF-8 byte order is the same as UTF-16's here).
        Array.Sort(kept, static (a, b) => a.Sid.Length != b.Sid.Length ? a.Sid.Length.CompareTo(b.Sid.Length) : a.Sid.AsSpan().SequenceCompareTo(b.Sid));
        return kept;
    }

    /// <summary>The round trip as /connz shows it (Go's duration form, whole microseconds below a millisecond).</summary>
    public static string Rtt(TimeSpan roundTrip) => GoFormat.Duration(TruncateRoundTrip(roundTrip));

    /// <summary>The user JWT's fields /connz shows with <c>auth</c> (nats-server: <c>jwt</c>, <c>issuer_key</c>, <c>tags</c>, <c>name_tag</c>).</summary>
    public static void AddJwt(ConnInfo info, Auth.JwtUser? jwt)
    {
        if (jwt is null)
        {
            return;
        }

        info.Jwt = jwt.Token;
        info.IssuerKey = jwt.IssuerKey;
        info.Tags = jwt.Claims.Nats.Tags is { Count: > 0 } tags ? tags : null;
        info.NameTag = string.IsNullOrEmpty(jwt.Claims.Name) ? null : jwt.Claims.Name;
    }

    /// <summary>
    /// Subscription details in a stable order (by client, then sid); with <paramref name="withAccount"/> each names
    /// its client's account (/subsz does, /connz does not).
    /// </summary>
    public static SubDetail[] Details(IEnumerable<Subscription> subscriptions, bool withAccount)
    {
        return [.. subscriptions
            .Select(s => new SubDetail
            {
                Account = withAccount ? s.Client.Account.Name : null,
                Subject = s.SubjectString,
                Queue = s.QueueString,
                Sid = s.SidString,
                Msgs = Interlocked.Read(ref s.Delivered),
                Max = s.Max > 0 ? s.Max : null,
                Cid = s.Client.Id,
            })
            .OrderBy(d => d.Cid)
            .ThenBy(d => d.Sid.Length)
            .ThenBy(d => d.Sid, StringComparer.Ordinal)];
    }

    private static ConnInfo Common(ClientBase client, IClientConnection connection)
    {
        var endPoint = connection.RemoteEndPoint;
        var address = endPoint?.Address;
        if (address is not null && address.IsIPv4MappedToIPv6)
        {
            address = address.MapToIPv4();
        }

        var roundTrip = connection.RoundTrip;

        // TLS details as nats-server shows them ("1.3", Go's cipher suite names, which are the IANA ones .NET uses).
        var tls = connection.Tls is { IsEstablished: true } session ? session : null;
        return new ConnInfo
        {
            TlsVersion = tls?.Protocol switch
            {
                null => null,
                System.Security.Authentication.SslProtocols.Tls13 => "1.3",
                System.Security.Authentication.SslProtocols.Tls12 => "1.2",
                var other => other.ToString(),
            },
            TlsCipherSuite = tls?.CipherSuite.ToString(),
            TlsFirst = tls is { HandshakeFirst: true } ? true : null,
            Cid = client.Id,
            Type = connection.ConnectionType,
            Ip = address?.ToString() ?? string.Empty,
            Port = endPoint?.Port ?? 0,
            Start = client.StartedAt.UtcDateTime,
            Rtt = Rtt(roundTrip),
            RoundTrip = roundTrip,
            PendingBytes = connection.PendingBytes,
            InMsgs = Interlocked.Read(ref client.InMessages),
            InBytes = Interlocked.Read(ref client.InBytes),
            OutMsgs = Interlocked.Read(ref client.OutMessages),
            OutBytes = Interlocked.Read(ref client.OutBytes),
            Name = NullIfEmpty(client.Name),
            Lang = NullIfEmpty(connection.Lang),
            Version = NullIfEmpty(connection.ClientVersion),

            // nats-server names an MQTT client by its client id in a field of its own.
            MqttClient = connection.ConnectionType == "mqtt" ? NullIfEmpty(client.Name) : null,
        };
    }

    // nats-server shows sub-millisecond round trips in whole microseconds.
    private static TimeSpan TruncateRoundTrip(TimeSpan rtt)
        => rtt > TimeSpan.FromTicks(TimeSpan.TicksPerMicrosecond) && rtt < TimeSpan.FromMilliseconds(1)
            ? TimeSpan.FromTicks(rtt.Ticks - (rtt.Ticks % TimeSpan.TicksPerMicrosecond))
            : rtt;

    private static string? NullIfEmpty(string? value) => string.IsNullOrEmpty(value) ? null : value;
}
