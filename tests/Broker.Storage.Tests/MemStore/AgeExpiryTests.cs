using Broker.Storage.MemStore.Internal;

namespace Broker.Storage.Tests.MemStore;

/// <summary>The memory store's max_age: when the timer is due, what expires, and that the timer calls the store back.</summary>
public sealed class AgeExpiryTests
{
    [Fact]
    public void Expired_messages_are_removed_oldest_first_and_the_rest_kept()
    {
        var parts = new MemStoreParts();
        var now = MessageLog.Now();
        parts.Append("a", timestamp: now - TimeSpan.FromMinutes(10).Ticks * 100);
        parts.Append("b", timestamp: now - TimeSpan.FromMinutes(5).Ticks * 100);
        parts.Append("a", timestamp: now);
        using var age = new AgeExpiry(parts.Log, parts.Subjects, () => { });

        age.RemoveExpired(TimeSpan.FromMinutes(1), null, null);

        Assert.Equal(1UL, parts.Log.Count);
        Assert.Equal(3UL, parts.Log.First);
        Assert.Null(parts.Subjects.Find("b"u8));
    }

    [Fact]
    public void Due_when_the_first_message_expires_or_after_the_whole_age_when_empty()
    {
        var parts = new MemStoreParts();
        using var age = new AgeExpiry(parts.Log, parts.Subjects, () => { });
        Assert.Equal(TimeSpan.FromMinutes(1), age.DueIn(TimeSpan.FromMinutes(1)));

        parts.Append("a", timestamp: MessageLog.Now() - TimeSpan.FromSeconds(40).Ticks * 100);
        var due = age.DueIn(TimeSpan.FromMinutes(1));
        Assert.InRange(due!.Value, TimeSpan.FromSeconds(15), TimeSpan.FromSeconds(20) + TimeSpan.FromMilliseconds(1));

        parts.Append("a", timestamp: MessageLog.Now());
        parts.Log.Remove(1, secureErase: false, parts.Subjects, null);
        parts.Append("a", timestamp: MessageLog.Now());
        Assert.True(age.DueIn(TimeSpan.FromMinutes(1)) > TimeSpan.FromSeconds(55));
    }

    [Fact(Timeout = 30_000)]
    public async Task The_timer_calls_the_store_when_the_first_message_is_due()
    {
        var parts = new MemStoreParts();
        parts.Append("a", timestamp: MessageLog.Now() - TimeSpan.FromSeconds(1).Ticks * 100);
        var fired = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using var age = new AgeExpiry(parts.Log, parts.Subjects, () => fired.TrySetResult());

        Assert.False(age.IsArmed);
        age.Schedule(TimeSpan.FromMilliseconds(100), closed: false);
        Assert.True(age.IsArmed);

        await fired.Task.WaitAsync(TimeSpan.FromSeconds(20));
    }

    [Fact]
    public void No_age_or_a_closed_store_stops_the_timer()
    {
        var parts = new MemStoreParts();
        using var age = new AgeExpiry(parts.Log, parts.Subjects, () => { });
        age.Schedule(TimeSpan.FromHours(1), closed: false);
        Assert.True(age.IsArmed);
        age.Schedule(TimeSpan.Zero, closed: false);
        Assert.False(age.IsArmed);
        age.Schedule(TimeSpan.FromHours(1), closed: false);
        age.Schedule(TimeSpan.FromHours(1), closed: true);
        Assert.False(age.IsArmed);
    }
}
