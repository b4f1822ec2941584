using Broker.Abstractions;
using Broker.Storage.MemStore.Internal;

namespace Broker.Storage.Tests.MemStore;

/// <summary>The memory store's limits: what discard-new refuses and what discard-old removes, after an append and after a change.</summary>
public sealed class StreamLimitsTests
{
    private static StreamStoreConfig Config(long maxMessages = -1, long maxBytes = -1, long perSubject = -1, DiscardPolicy discard = DiscardPolicy.Old, bool newPerSubject = false) => new()
    {
        Name = "S",
        StorageType = "memory",
        MaxMessages = maxMessages,
        MaxBytes = maxBytes,
        MaxMessagesPerSubject = perSubject,
        Discard = discard,
        DiscardNewPerSubject = newPerSubject,
    };

    [Fact]
    public void Discard_old_removes_the_oldest_beyond_max_msgs_and_reports_them()
    {
        var parts = new MemStoreParts();
        var limits = new StreamLimits(Config(maxMessages: 2), parts.Log, parts.Subjects);
        var removed = RemovalBuffer.Rent();
        try
        {
            for (var i = 0; i < 4; i++)
            {
                parts.Append("a");
                limits.EnforceAfterAppend(parts.Record("a"), removed);
            }

            Assert.Equal(2UL, parts.Log.Count);
            Assert.Equal(3UL, parts.Log.First);
            Assert.Equal(2, removed.Count);
            Assert.Equal(1UL, removed[0].Sequence);
            Assert.Equal(2UL, removed[1].Sequence);
        }
        finally
        {
            RemovalBuffer.Return(removed);
        }
    }

    [Fact]
    public void The_per_subject_limit_removes_the_subjects_own_oldest()
    {
        var parts = new MemStoreParts();
        var limits = new StreamLimits(Config(perSubject: 1), parts.Log, parts.Subjects);
        foreach (var subject in new[] { "a", "b", "a", "a" })
        {
            parts.Append(subject);
            limits.EnforceAfterAppend(parts.Record(subject), null);
        }

        Assert.Equal(2UL, parts.Log.Count);
        Assert.True(parts.Log.Contains(2));
        Assert.True(parts.Log.Contains(4));
    }

    [Fact]
    public void Max_bytes_is_kept_by_removing_from_the_front()
    {
        var parts = new MemStoreParts();
        var limits = new StreamLimits(Config(maxBytes: 40), parts.Log, parts.Subjects);
        for (var i = 0; i < 3; i++)
        {
            parts.Append("a");
            limits.EnforceAfterAppend(parts.Record("a"), null);
        }

        Assert.Equal(2UL, parts.Log.Count);
        Assert.Equal(36UL, parts.Log.Bytes);
    }

    [Fact]
    public void Discard_new_refuses_with_the_limit_reached()
    {
        var parts = new MemStoreParts();
        parts.Append("a");
        parts.Append("b");

        Assert.Equal(StoreStatus.MaxMessages, new StreamLimits(Config(maxMessages: 2, discard: DiscardPolicy.New), parts.Log, parts.Subjects).CheckDiscardNew(null, 18));
        Assert.Equal(StoreStatus.MaxBytes, new StreamLimits(Config(maxBytes: 50, discard: DiscardPolicy.New), parts.Log, parts.Subjects).CheckDiscardNew(null, 18));
        Assert.Null(new StreamLimits(Config(maxBytes: 54, discard: DiscardPolicy.New), parts.Log, parts.Subjects).CheckDiscardNew(null, 18));
        Assert.Null(new StreamLimits(Config(maxMessages: 2), parts.Log, parts.Subjects).CheckDiscardNew(null, 18));

        // At the per-subject limit the append replaces the subject's oldest, unless that is refused too.
        var perSubject = new StreamLimits(Config(maxMessages: 2, perSubject: 1, discard: DiscardPolicy.New), parts.Log, parts.Subjects);
        Assert.Null(perSubject.CheckDiscardNew(parts.Record("a"), 18));
        var refusePerSubject = new StreamLimits(Config(perSubject: 1, discard: DiscardPolicy.New, newPerSubject: true), parts.Log, parts.Subjects);
        Assert.Equal(StoreStatus.MaxMessagesPerSubject, refusePerSubject.CheckDiscardNew(parts.Record("a"), 18));
        var bytesPerSubject = new StreamLimits(Config(maxBytes: 36, perSubject: 1, discard: DiscardPolicy.New), parts.Log, parts.Subjects);
        Assert.Null(bytesPerSubject.CheckDiscardNew(parts.Record("a"), 18));
        Assert.Equal(StoreStatus.MaxBytes, bytesPerSubject.CheckDiscardNew(parts.Record("a"), 19));
    }

    [Fact]
    public void A_lowered_per_subject_limit_is_applied_to_every_subject()
    {
        var parts = new MemStoreParts();
        var limits = new StreamLimits(Config(), parts.Log, parts.Subjects);
        foreach (var subject in new[] { "a", "a", "a", "b", "b" })
        {
            parts.Append(subject);
        }

        limits.Update(Config(perSubject: 1), null);

        Assert.Equal(1L, limits.Config.MaxMessagesPerSubject);
        Assert.Equal(2UL, parts.Log.Count);
        Assert.Equal(1UL, parts.Record("a").Messages);
        Assert.Equal(3UL, parts.Record("a").First);
        Assert.Equal(5UL, parts.Record("b").Last);
    }
}
