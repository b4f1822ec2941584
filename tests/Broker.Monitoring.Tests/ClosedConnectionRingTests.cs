using System.Text.Json;
using Broker.Core.Internal.Monitoring;
using Broker.Core.Internal.Monitoring.Models;

namespace Broker.Monitoring.Tests;

/// <summary>
/// The closed-connection ring keeps compact records whose equal strings are held once (issue 25), and shows each as
/// the /connz view it was built from.
/// </summary>
public sealed class ClosedConnectionRingTests
{
    private static readonly JsonSerializerOptions OmitNulls = new() { DefaultIgnoreCondition = System.Text.Json.Serialization.JsonIgnoreCondition.WhenWritingNull };

    [Fact]
    public void Equal_strings_are_held_once_and_let_go_as_records_drop_out()
    {
        var ring = new ClosedConnectionRing(3);
        var records = Enumerable.Range(0, 5).Select(i => Record((ulong)i + 1, $"name.{i % 2}")).ToArray();
        foreach (var record in records)
        {
            ring.Add(record);
        }

        var kept = ring.Snapshot();
        Assert.Equal([3UL, 4UL, 5UL], kept.Select(c => c.Cid));

        // Built from distinct string instances: the ring keeps one of each.
        Assert.Same(kept[0].Profile, kept[1].Profile);
        Assert.Same(kept[0].Profile.Ip, kept[2].Profile.Ip);
        Assert.Same(kept[0].Name, kept[2].Name);

        // Held: the profile's type, address, reason, lang, version (names are not counted: below).
        Assert.Equal((Strings: 5, Profiles: 1), ring.SharedCounts);

        ring.Add(Record(6, "name.0"));
        ring.Add(Record(7, "name.0"));
        Assert.Equal((Strings: 5, Profiles: 1), ring.SharedCounts);
        Assert.Equal(["name.0", "name.0", "name.0"], ring.Snapshot().Select(c => c.ToInfo().Name));
    }

    [Fact(Timeout = 10_000)]
    public async Task Distinct_names_grow_no_table_and_the_ring_keeps_the_newest_in_order()
    {
        await Task.Yield();

        // 10,000 MQTT sessions leaving have 10,000 distinct client ids: a counted entry each was 0.63 MB of table.
        var ring = new ClosedConnectionRing(1_000);
        for (var i = 1; i <= 2_500; i++)
        {
            ring.Add(Record((ulong)i, $"session-{i}"));
        }

        Assert.Equal((Strings: 5, Profiles: 1), ring.SharedCounts);
        var kept = ring.Snapshot();
        Assert.Equal(Enumerable.Range(1_501, 1_000).Select(i => (ulong)i), kept.Select(c => c.Cid));
        Assert.Equal("session-2500", kept[^1].ToInfo().Name);
    }

    [Fact]
    public void A_record_shows_the_view_it_was_built_from()
    {
        var info = Info(42);
        info.TlsVersion = "1.3";
        info.TlsCipherSuite = "TLS_AES_128_GCM_SHA256";
        info.TlsFirst = true;
        info.RoundTrip = TimeSpan.FromTicks(12_345);
        info.Rtt = ConnectionSnapshot.Rtt(info.RoundTrip);
        info.Uptime = GoFormat.Uptime(info.Stop!.Value - info.Start);
        info.Idle = GoFormat.Uptime(info.Stop!.Value - info.LastActivity);
        info.Subscriptions = 2;
        var record = new ClosedConnection(info, Profile(info, "Slow Consumer (Pending Bytes)"), [new("b"u8.ToArray(), "q"u8.ToArray(), "10"u8.ToArray(), 3, 5), new("a"u8.ToArray(), null, "9"u8.ToArray(), 1, 0)]);
        var ring = new ClosedConnectionRing(10);
        ring.Add(record);

        var shown = ring.Snapshot()[0].ToInfo();
        info.Reason = "Slow Consumer (Pending Bytes)";
        Assert.Equal(JsonSerializer.Serialize(info), JsonSerializer.Serialize(shown));
        Assert.Equal(
            """[{"subject":"b","qgroup":"q","sid":"10","msgs":3,"max":5,"cid":42},{"subject":"a","sid":"9","msgs":1,"cid":42}]""",
            JsonSerializer.Serialize(ring.Snapshot()[0].SubscriptionDetails(), OmitNulls));
    }

    private static ClosedConnection Record(ulong cid, string name)
    {
        var info = Info(cid);

        // new string(...) so that equal strings are distinct instances, as each connection's are.
        info.Name = new string(name.AsSpan());
        return new ClosedConnection(info, Profile(info, new string("Client Closed".AsSpan())), [new("a"u8.ToArray(), null, "1"u8.ToArray(), 0, 0)]);
    }

    private static ConnInfo Info(ulong cid)
    {
        var start = new DateTime(2026, 11, 28, 8, 0, 0, DateTimeKind.Utc);
        return new ConnInfo
        {
            Cid = cid,
            Ip = new string("127.0.0.1".AsSpan()),
            Port = 40_000 + (int)cid,
            Start = start,
            LastActivity = start.AddSeconds(3),
            Stop = start.AddSeconds(65),
            InMsgs = 1,
            OutMsgs = 2,
            InBytes = 3,
            OutBytes = 4,
            PendingBytes = 5,
            Name = new string("idle".AsSpan()),
            Lang = new string("go".AsSpan()),
            Version = new string("1.2.3".AsSpan()),
        };
    }

    private static ClosedProfile Profile(ConnInfo info, string reason)
        => new(info.Type, info.Ip, reason, info.Lang, info.Version, info.TlsVersion, info.TlsCipherSuite, info.TlsFirst, null, "", null);
}
