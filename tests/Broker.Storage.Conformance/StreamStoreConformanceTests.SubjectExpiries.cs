using System.Buffers;
using System.Text;
using Broker.Abstractions;
using Xunit;

namespace Broker.Storage.Conformance;

/// <summary>
/// Contract 1.4's subject expiries (<see cref="IStreamStore.RegisterSubjectExpiries"/>, nats-server 2.11's
/// <c>sdmcb</c>), for stores whose provider declares <see cref="StoreFeatures.SubjectExpiries"/>: the handler hears of a
/// message <c>max_age</c> or its own time to live removed when it was the last of its subject, with its sequence,
/// subject and headers, in sequence order; not of one whose subject keeps messages, nor of removals by other limits or
/// by request.
/// </summary>
public abstract partial class StreamStoreConformanceTests
{
    private static readonly StoreOptions OneSecondToLive = new() { TimeToLive = TimeSpan.FromSeconds(1) };

    [Fact(Timeout = Timeout)]
    public async Task Max_age_emptying_a_subject_tells_the_expiry_handler_with_the_last_message()
    {
        if (!Features.HasFlag(StoreFeatures.SubjectExpiries))
        {
            return;
        }

        var store = await CreateAsync(NewConfig() with { MaxAge = TimeSpan.FromSeconds(1), MaxMessagesPerSubject = 2 });
        var heard = Listen(store);
        StoreHeaders(store, "foo.a", "NATS/1.0\r\nA: 1\r\n\r\n", default);
        StoreHeaders(store, "foo.a", "NATS/1.0\r\nA: 2\r\n\r\n", default);
        StoreHeaders(store, "foo.b", "", default);
        StoreHeaders(store, "foo.c", "", default);
        StoreHeaders(store, "foo.c", "", default);
        StoreHeaders(store, "foo.c", "", default);
        StoreHeaders(store, "foo.d", "", default);

        // Neither a per-subject limit's removal (foo.c's first) nor a request's (foo.d) is an expiry.
        Assert.True(store.Remove(7));
        await WaitUntil(() => store.GetState().Messages == 0 && Heard(heard).Length == 3);
        Assert.Equal([(2UL, "foo.a", "NATS/1.0\r\nA: 2\r\n\r\n"), (3UL, "foo.b", ""), (6UL, "foo.c", "")], Heard(heard));
    }

    [Fact(Timeout = Timeout)]
    public async Task A_time_to_live_emptying_a_subject_tells_the_expiry_handler_and_one_that_does_not_is_not_told()
    {
        if (!Features.HasFlag(StoreFeatures.SubjectExpiries))
        {
            return;
        }

        var store = await CreateAsync();
        var heard = Listen(store);
        StoreHeaders(store, "foo.a", "NATS/1.0\r\nNats-TTL: 1\r\n\r\n", OneSecondToLive);
        StoreHeaders(store, "foo.b", "", OneSecondToLive);
        StoreHeaders(store, "foo.b", "", default);

        await WaitUntil(() => store.GetState().Messages == 1 && Heard(heard).Length == 1);
        Assert.Equal([(1UL, "foo.a", "NATS/1.0\r\nNats-TTL: 1\r\n\r\n")], Heard(heard));
        Assert.Equal(LoadStatus.Found, store.Load(3, new StoredMessage()));

        // Without a handler the store keeps nothing for one: a later registration hears only what expires after it.
        store.RegisterSubjectExpiries(null);
        StoreHeaders(store, "foo.c", "", OneSecondToLive);
        await WaitUntil(() => store.GetState().Messages == 1 && store.Load(4, new StoredMessage()) != LoadStatus.Found);
        var later = Listen(store);
        StoreHeaders(store, "foo.d", "", OneSecondToLive);
        await WaitUntil(() => Heard(later).Length == 1);
        Assert.Equal([(5UL, "foo.d", "")], Heard(later));
        Assert.Single(Heard(heard));
    }

    [Fact(Timeout = Timeout)]
    public async Task An_expiring_last_message_stays_readable_until_the_handler_returns_and_goes_after()
    {
        if (!Features.HasFlag(StoreFeatures.SubjectExpiries) || !KeepsExpiredForMarker)
        {
            return;
        }

        // The engine stores its marker from the handler: a reader between the expiry and the marker would otherwise
        // find the subject empty (a key-value get reads "not found", not "deleted").
        var store = await CreateAsync(NewConfig() with { MaxAge = TimeSpan.FromSeconds(1) });
        var seen = new List<(ulong Expired, LoadStatus Status, ulong Last)>();
        store.RegisterSubjectExpiries((sequence, subject, _) =>
        {
            var last = new StoredMessage();
            var status = store.LoadLast(subject, last);
            lock (seen)
            {
                seen.Add((sequence, status, last.Sequence));
            }
        });
        StoreHeaders(store, "foo.a", "", default);
        StoreHeaders(store, "foo.b", "", OneSecondToLive);

        // Neither handler stored anything: both messages go after it returns.
        await WaitUntil(() => store.GetState().Messages == 0);
        lock (seen)
        {
            Assert.Equal([(1UL, LoadStatus.Found, 1UL), (2UL, LoadStatus.Found, 2UL)], seen.OrderBy(s => s.Expired));
        }

        Assert.NotEqual(LoadStatus.Found, store.Load(1, new StoredMessage()));
        Assert.NotEqual(LoadStatus.Found, store.Load(2, new StoredMessage()));
    }

    [Fact(Timeout = Timeout)]
    public async Task A_marker_stored_from_the_handler_with_a_subject_purge_leaves_the_marker_alone()
    {
        if (!Features.HasFlag(StoreFeatures.SubjectExpiries) || !KeepsExpiredForMarker)
        {
            return;
        }

        // What the engine's marker does: a new message on the subject, then the older ones purged (Nats-Rollup: sub).
        var store = await CreateAsync(NewConfig() with { MaxAge = TimeSpan.FromSeconds(1) });
        var heard = 0;
        var stored = StoreStatus.Stored;
        var purged = ulong.MaxValue;
        store.RegisterSubjectExpiries((sequence, subject, headers) =>
        {
            if (Interlocked.Increment(ref heard) == 1)
            {
                // Recorded, not asserted: the handler runs on the store's timer thread.
                stored = store.Store(subject.ToArray(), new ReadOnlySequence<byte>("NATS/1.0\r\nNats-Marker-Reason: MaxAge\r\n\r\n"u8.ToArray()), ReadOnlySequence<byte>.Empty, OneSecondToLive).Status;
                Volatile.Write(ref purged, store.Purge(Encoding.UTF8.GetString(subject), 0, 1));
            }
        });
        StoreHeaders(store, "foo.a", "", default);

        // The subject purge removed the expired message (it was still there); the marker stays until its own expiry.
        await WaitUntil(() => Volatile.Read(ref purged) != ulong.MaxValue);
        Assert.Equal(StoreStatus.Stored, stored);
        Assert.Equal(1UL, purged);
        Assert.NotEqual(LoadStatus.Found, store.Load(1, new StoredMessage()));
        var marker = new StoredMessage();
        Assert.Equal(LoadStatus.Found, store.LoadLast("foo.a"u8, marker));
        Assert.Equal(2UL, marker.Sequence);
        await WaitUntil(() => store.GetState().Messages == 0);
    }

    private static List<(ulong, string, string)> Listen(IStreamStore store)
    {
        var heard = new List<(ulong, string, string)>();
        store.RegisterSubjectExpiries((sequence, subject, headers) =>
        {
            lock (heard)
            {
                heard.Add((sequence, Encoding.UTF8.GetString(subject), Encoding.UTF8.GetString(headers)));
            }
        });
        return heard;
    }

    private static (ulong, string, string)[] Heard(List<(ulong, string, string)> heard)
    {
        lock (heard)
        {
            return [.. heard];
        }
    }

    private static void StoreHeaders(IStreamStore store, string subject, string headers, in StoreOptions options)
    {
        var result = store.Store(Encoding.UTF8.GetBytes(subject), new ReadOnlySequence<byte>(Encoding.UTF8.GetBytes(headers)), new ReadOnlySequence<byte>("x"u8.ToArray()), options);
        Assert.Equal(StoreStatus.Stored, result.Status);
    }
}
