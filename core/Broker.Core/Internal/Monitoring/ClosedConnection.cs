using System.Text;
using Broker.Core.Internal.Auth;
using Broker.Core.Internal.Monitoring.Models;

namespace Broker.Core.Internal.Monitoring;

/// <summary>
/// A closed connection as the ring keeps it: its final counters and times as primitives, its strings shared with
/// every other record that has equal ones (<see cref="ClosedProfile"/>, <see cref="SharedValues{T}"/>), and
/// materialised into /connz's <see cref="ConnInfo"/> only when asked (<see cref="ToInfo"/>). nats-server keeps
/// max_closed_clients of them (10,000 by default) with every field /connz shows; a <see cref="ConnInfo"/> with its
/// formatted strings and <see cref="SubDetail"/> objects was about 600 B each, most of what 10,000 clients left behind
/// (issue 25); this is 104 B and its subscriptions, and the derived strings (rtt, uptime, idle) are formatted per answer.
/// A struct: the ring holds its records in one array, without an object header and a reference each (24 B a record).
/// </summary>
internal struct ClosedConnection
{
    /// <summary>Builds the record from the final view; <see cref="ClosedConnectionRing"/> shares its strings as it keeps it.</summary>
    public ClosedConnection(ConnInfo info, ClosedProfile profile, ClosedSubscription[] subscriptions)
    {
        Cid = info.Cid;
        portAndRoundTrip = PackPortAndRoundTrip(info.Port, info.RoundTrip);
        Start = info.Start;
        LastActivity = info.LastActivity;
        Stop = info.Stop ?? info.LastActivity;
        PendingBytes = info.PendingBytes;
        InMsgs = info.InMsgs;
        OutMsgs = info.OutMsgs;
        InBytes = info.InBytes;
        OutBytes = info.OutBytes;
        Name = info.Name;
        Profile = profile;
        Subscriptions = subscriptions;
    }

    public ulong Cid { get; }

    /// <summary>What equal records share: type, address, client library, TLS, reason, user, account, JWT.</summary>
    public ClosedProfile Profile { get; internal set; }

    /// <summary>The client's name (MQTT: its client id).</summary>
    public string? Name { get; internal set; }

    /// <summary>The subscriptions it had when it closed, by sid.</summary>
    public ClosedSubscription[] Subscriptions { get; }

    /// <summary>The user it authenticated as, shown with <c>auth</c>.</summary>
    public string? AuthorizedUser => Profile.AuthorizedUser;

    /// <summary>The account it was in, empty for the global account (nats-server's <c>closedClient.acc</c>).</summary>
    public string Account => Profile.Account;

    /// <summary>In operator mode, what its user JWT gave it.</summary>
    public JwtUser? Jwt => Profile.Jwt;

    // The port (16 bits) and the round trip's ticks (the 47 above: 163 days, clamped) in one field: with the port an
    // int of its own the record was 8 B longer (80 KB of a full ring of 10,000).
    private readonly long portAndRoundTrip;

    private int Port => (int)(portAndRoundTrip & 0xFFFF);

    private TimeSpan RoundTrip => TimeSpan.FromTicks(portAndRoundTrip >>> 16);

    private DateTime Start { get; }

    private DateTime LastActivity { get; }

    private DateTime Stop { get; }

    private long PendingBytes { get; }

    private long InMsgs { get; }

    private long OutMsgs { get; }

    private long InBytes { get; }

    private long OutBytes { get; }

    /// <summary>A new /connz view of the record, as <see cref="ConnectionSnapshot.Closed"/> saw it when it closed.</summary>
    public ConnInfo ToInfo() => new()
    {
        Cid = Cid,
        Type = Profile.Type,
        Ip = Profile.Ip,
        Port = Port,
        Start = Start,
        LastActivity = LastActivity,
        Stop = Stop,
        Reason = Profile.Reason,
        Rtt = ConnectionSnapshot.Rtt(RoundTrip),
        RoundTrip = RoundTrip,
        Uptime = GoFormat.Uptime(Stop - Start),
        Idle = GoFormat.Uptime(Stop - LastActivity),
        PendingBytes = PendingBytes,
        InMsgs = InMsgs,
        OutMsgs = OutMsgs,
        InBytes = InBytes,
        OutBytes = OutBytes,
        Subscriptions = Subscriptions.Length,
        Name = Name,
        Lang = Profile.Lang,
        Version = Profile.Version,
        TlsVersion = Profile.TlsVersion,
        TlsCipherSuite = Profile.TlsCipherSuite,
        TlsFirst = Profile.TlsFirst,
        MqttClient = Profile.Type == "mqtt" ? Name : null,
    };

    private static long PackPortAndRoundTrip(int port, TimeSpan roundTrip)
    {
        const long maxTicks = (1L << 47) - 1;
        return (Math.Clamp(roundTrip.Ticks, 0, maxTicks) << 16) | (uint)(port & 0xFFFF);
    }

    /// <summary>The subscriptions as /connz lists them with <c>subs=detail</c>.</summary>
    public SubDetail[] SubscriptionDetails()
    {
        var details = new SubDetail[Subscriptions.Length];
        for (var i = 0; i < details.Length; i++)
        {
            var s = Subscriptions[i];
            details[i] = new SubDetail
            {
                Subject = Encoding.UTF8.GetString(s.Subject),
                Queue = s.Queue is null ? null : Encoding.UTF8.GetString(s.Queue),
                Sid = Encoding.UTF8.GetString(s.Sid),
                Msgs = s.Msgs,
                Max = s.Max > 0 ? s.Max : null,
                Cid = Cid,
            };
        }

        return details;
    }
}

/// <summary>What many closed connections have in common (one copy for all that are equal).</summary>
/// <param name="Type">nats, websocket, mqtt, or an in-process connection's protocol.</param>
/// <param name="Ip">The remote address.</param>
/// <param name="Reason">Why it closed.</param>
/// <param name="Lang">The client library's language.</param>
/// <param name="Version">The client library's version.</param>
/// <param name="TlsVersion">"1.3", "1.2", or none.</param>
/// <param name="TlsCipherSuite">The cipher suite, if TLS.</param>
/// <param name="TlsFirst">Whether the TLS handshake came first.</param>
/// <param name="AuthorizedUser">The user it authenticated as.</param>
/// <param name="Account">Its account's name, empty for the global account.</param>
/// <param name="Jwt">What its user JWT gave it, in operator mode.</param>
internal sealed record ClosedProfile(
    string Type,
    string Ip,
    string? Reason,
    string? Lang,
    string? Version,
    string? TlsVersion,
    string? TlsCipherSuite,
    bool? TlsFirst,
    string? AuthorizedUser,
    string Account,
    JwtUser? Jwt);

/// <summary>
/// One subscription a closed connection had. Its subject, queue and sid are the subscription's own UTF-8 arrays, kept
/// rather than copied into strings: nothing else holds them once it is gone, and subjects are often all distinct
/// (sharing them through a table cost more than it saved: 560 KB of table for 10,000 distinct subjects).
/// </summary>
/// <param name="Subject">The subject, UTF-8.</param>
/// <param name="Queue">The queue group, if any, UTF-8.</param>
/// <param name="Sid">The client's id for it, UTF-8.</param>
/// <param name="Msgs">Messages delivered.</param>
/// <param name="Max">The auto-unsubscribe limit, 0 for none.</param>
internal readonly record struct ClosedSubscription(byte[] Subject, byte[]? Queue, byte[] Sid, long Msgs, long Max);
