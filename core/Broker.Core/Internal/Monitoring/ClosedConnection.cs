using Broker.Core.Internal.Monitoring.Models;

namespace Broker.Core.Internal.Monitoring;

/// <summary>
/// A closed connection as /connz shows it, kept compactly: the ring holds up to <c>max_closed_clients</c> (10,000 by
/// default) of these for the server's life, so a record keeps numbers and times rather than a <see cref="ConnInfo"/>
/// (its uptime, idle and round-trip texts are made again for each answer from the times, which are final), and
/// shares the texts records repeat through the ring's <see cref="SharedText"/>.
/// </summary>
internal sealed class ClosedConnection
{
    private readonly ulong cid;
    private readonly int port;
    private readonly int subscriptionCount;
    private readonly bool? tlsFirst;
    private readonly long startTicks;
    private readonly long stopTicks;
    private readonly long lastActivityTicks;
    private readonly long roundTripTicks;
    private readonly long pendingBytes;
    private readonly long inMsgs;
    private readonly long outMsgs;
    private readonly long inBytes;
    private readonly long outBytes;
    private readonly string kind;
    private string type;
    private string ip;
    private string? reason;
    private string? name;
    private string? lang;
    private string? version;
    private string? tlsVersion;
    private string? tlsCipherSuite;
    private readonly bool mqttClient;
    private readonly ClosedSubscription[] subscriptions;

    /// <summary>Keeps what <paramref name="info"/> (the connection's final view, with its stop time) and the rest show.</summary>
    /// <param name="info">The final view (<see cref="ConnectionSnapshot.Closed"/>); not kept.</param>
    /// <param name="authorizedUser">The user it authenticated as, shown with <c>auth</c>.</param>
    /// <param name="account">The name of its account, empty for the global account (nats-server's <c>closedClient.acc</c>).</param>
    /// <param name="subscriptions">The subscriptions it had when it closed; not kept.</param>
    /// <param name="jwt">In operator mode, what its user JWT gave it (/connz <c>jwt</c>, <c>issuer_key</c>, <c>name_tag</c>, <c>tags</c> with <c>auth</c>).</param>
    public ClosedConnection(ConnInfo info, string? authorizedUser, string account, SubDetail[] subscriptions, Auth.JwtUser? jwt = null)
    {
        cid = info.Cid;
        kind = info.Kind;
        type = info.Type;
        ip = info.Ip;
        port = info.Port;
        startTicks = info.Start.Ticks;
        stopTicks = (info.Stop ?? info.LastActivity).Ticks;
        lastActivityTicks = info.LastActivity.Ticks;
        roundTripTicks = info.RoundTrip.Ticks;
        reason = info.Reason;
        pendingBytes = info.PendingBytes;
        inMsgs = info.InMsgs;
        outMsgs = info.OutMsgs;
        inBytes = info.InBytes;
        outBytes = info.OutBytes;
        subscriptionCount = info.Subscriptions;
        name = info.Name;
        lang = info.Lang;
        version = info.Version;
        tlsVersion = info.TlsVersion;
        tlsCipherSuite = info.TlsCipherSuite;
        tlsFirst = info.TlsFirst;
        mqttClient = info.MqttClient is not null;
        AuthorizedUser = authorizedUser;
        Account = account;
        Jwt = jwt;
        this.subscriptions = subscriptions.Length == 0
            ? []
            : [.. subscriptions.Select(s => new ClosedSubscription(s.Subject, s.Queue, s.Sid, s.Msgs, s.Max))];
    }

    /// <summary>The connection's id.</summary>
    public ulong Cid => cid;

    /// <summary>The user it authenticated as, shown with <c>auth</c>.</summary>
    public string? AuthorizedUser { get; }

    /// <summary>The name of the account it was in, empty for the global account.</summary>
    public string Account { get; }

    /// <summary>What its user JWT gave it, in operator mode.</summary>
    public Auth.JwtUser? Jwt { get; }

    /// <summary>A new view for one answer, as <see cref="ConnectionSnapshot.Closed"/> made it.</summary>
    public ConnInfo ToInfo()
    {
        var start = new DateTime(startTicks, DateTimeKind.Utc);
        var stop = new DateTime(stopTicks, DateTimeKind.Utc);
        var lastActivity = new DateTime(lastActivityTicks, DateTimeKind.Utc);
        var roundTrip = TimeSpan.FromTicks(roundTripTicks);
        return new ConnInfo
        {
            Cid = cid,
            Kind = kind,
            Type = type,
            Ip = ip,
            Port = port,
            Start = start,
            LastActivity = lastActivity,
            Stop = stop,
            Reason = reason,
            Rtt = ConnectionSnapshot.RoundTripText(roundTrip),
            RoundTrip = roundTrip,
            Uptime = GoFormat.Uptime(stop - start),
            Idle = GoFormat.Uptime(stop - lastActivity),
            PendingBytes = pendingBytes,
            InMsgs = inMsgs,
            OutMsgs = outMsgs,
            InBytes = inBytes,
            OutBytes = outBytes,
            Subscriptions = subscriptionCount,
            Name = name,
            Lang = lang,
            Version = version,
            TlsVersion = tlsVersion,
            TlsCipherSuite = tlsCipherSuite,
            TlsFirst = tlsFirst,
            MqttClient = mqttClient ? name : null,
        };
    }

    /// <summary>The subscriptions it had, as /connz lists them (ordered by sid, as when it closed).</summary>
    public SubDetail[] SubscriptionDetails() =>
        [.. subscriptions.Select(s => new SubDetail { Subject = s.Subject, Queue = s.Queue, Sid = s.Sid, Msgs = s.Msgs, Max = s.Max, Cid = cid })];

    /// <summary>Replaces the texts other records repeat by the copy <paramref name="shared"/> holds (the ring's lock held).</summary>
    public void ShareText(SharedText shared)
    {
        type = shared.Share(type);
        ip = shared.Share(ip);
        reason = shared.Share(reason);
        name = shared.Share(name);
        lang = shared.Share(lang);
        version = shared.Share(version);
        tlsVersion = shared.Share(tlsVersion);
        tlsCipherSuite = shared.Share(tlsCipherSuite);
        for (var i = 0; i < subscriptions.Length; i++)
        {
            subscriptions[i] = subscriptions[i] with { Sid = shared.Share(subscriptions[i].Sid) };
        }
    }

    // A subscription the connection had; its cid is the record's.
    private readonly record struct ClosedSubscription(string Subject, string? Queue, string Sid, long Msgs, long? Max);
}
