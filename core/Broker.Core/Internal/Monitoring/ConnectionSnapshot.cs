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
    /// <summary>The view of an open connection at <paramref name="now"/>.</summary>
    public static ConnInfo Open(NatsClient client, DateTime now)
    {
        var info = Common(client);
        var lastActivity = now - TimeSpan.FromMilliseconds(Math.Max(Environment.TickCount64 - client.LastActivityTick, 0));
        info.LastActivity = lastActivity;
        info.Uptime = GoFormat.Uptime(now - info.Start);
        info.Idle = GoFormat.Uptime(now - lastActivity);
        info.Subscriptions = client.SubscriptionCount;
        return info;
    }

    /// <summary>The final view of a connection that has just closed, with the subscriptions it had.</summary>
    public static ClosedConnection Closed(NatsClient client, Subscription[] subscriptions)
    {
        var stop = client.ClosedAt?.UtcDateTime ?? DateTime.UtcNow;
        var info = Open(client, stop);
        info.Stop = stop;
        info.Reason = client.Reason.ToText() is { Length: > 0 } reason ? reason : null;
        info.Subscriptions = subscriptions.Length;
        return new ClosedConnection(info, client.AuthorizedUser, Details(subscriptions, account: null));
    }

    /// <summary>Subscription details in a stable order (by client, then sid).</summary>
    public static SubDetail[] Details(IEnumerable<Subscription> subscriptions, string? account)
    {
        return [.. subscriptions
            .Select(s => new SubDetail
            {
                Account = account,
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

    private static ConnInfo Common(NatsClient client)
    {
        var endPoint = client.RemoteEndPoint;
        var address = endPoint?.Address;
        if (address is not null && address.IsIPv4MappedToIPv6)
        {
            address = address.MapToIPv4();
        }

        var roundTrip = client.RoundTrip;

        // TLS details as nats-server shows them ("1.3", Go's cipher suite names, which are the IANA ones .NET uses).
        var tls = client.Tls is { IsEstablished: true } session ? session : null;
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
            Ip = address?.ToString() ?? string.Empty,
            Port = endPoint?.Port ?? 0,
            Start = client.StartedAt.UtcDateTime,
            Rtt = GoFormat.Duration(TruncateRoundTrip(roundTrip)),
            RoundTrip = roundTrip,
            PendingBytes = client.PendingBytes,
            InMsgs = Interlocked.Read(ref client.InMessages),
            InBytes = Interlocked.Read(ref client.InBytes),
            OutMsgs = Interlocked.Read(ref client.OutMessages),
            OutBytes = Interlocked.Read(ref client.OutBytes),
            Name = NullIfEmpty(client.Name),
            Lang = NullIfEmpty(client.Lang),
            Version = NullIfEmpty(client.ClientVersion),
        };
    }

    // nats-server shows sub-millisecond round trips in whole microseconds.
    private static TimeSpan TruncateRoundTrip(TimeSpan rtt)
        => rtt > TimeSpan.FromTicks(TimeSpan.TicksPerMicrosecond) && rtt < TimeSpan.FromMilliseconds(1)
            ? TimeSpan.FromTicks(rtt.Ticks - (rtt.Ticks % TimeSpan.TicksPerMicrosecond))
            : rtt;

    private static string? NullIfEmpty(string? value) => string.IsNullOrEmpty(value) ? null : value;
}
