using Broker.JetStream.Internal.Consumers;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Tests.Streams;

namespace Broker.JetStream.Tests.Consumers;

/// <summary>
/// The engine's one pause timer over real consumers of a memory stream: every paused consumer waits in its queue (no
/// timer or task of its own), each leaves it when its pause ends by itself, when it is resumed or re-paused, and when
/// it stops.
/// </summary>
public sealed class PauseTimerTests() : MemoryStreamTests("js-pause-timer-")
{
    private Consumer Started(string name, long? pauseUntil)
    {
        var consumer = NewConsumer(name, pauseUntil: pauseUntil);
        Stream.AddConsumer(consumer);
        consumer.Start();
        return consumer;
    }

    /// <summary>A configuration update with another <c>pause_until</c>, as <c>CONSUMER.PAUSE</c> makes.</summary>
    private static void Pause(Consumer consumer, long? until)
    {
        var updated = consumer.Config.Clone();
        updated.PauseUntil = until;
        consumer.UpdateConfig(updated);
    }

    [Fact(Timeout = 30_000)]
    public async Task Paused_consumers_share_one_timer_and_each_resumes_at_its_deadline()
    {
        var pauses = Account.Engine.Pauses;
        var now = GoTime.NowNanoseconds();
        // Due 2 s on: creating the 22 consumers must not outlast the first deadline, or the count below would already
        // miss the ones resumed (it failed once at a load average of 23 with 200 ms).
        var soon = Enumerable.Range(0, 20).Select(i => Started($"soon{i}", now + 2_000_000_000 + (i * 5_000_000))).ToList();
        var later = Started("later", now + 3_600_000_000_000);
        var past = Started("past", now - 1_000_000_000);
        Assert.False(past.Info().Paused);
        Assert.True(later.Info().Paused);
        Assert.Equal(21, pauses.Count);

        Assert.True(await Eventually.TrueAsync(() => pauses.Count == 1));
        Assert.All(soon, consumer => Assert.False(consumer.Info().Paused));
        Assert.True(later.Info().Paused);

        // Re-paused, then resumed: the queue holds it once, then not at all.
        Pause(later, GoTime.NowNanoseconds() + 7_200_000_000_000);
        Assert.Equal(1, pauses.Count);
        Pause(later, null);
        Assert.Equal(0, pauses.Count);
        Assert.False(later.Info().Paused);

        // A consumer that stops while paused leaves the queue.
        var stopped = Started("stopped", GoTime.NowNanoseconds() + 3_600_000_000_000);
        Assert.Equal(1, pauses.Count);
        await stopped.DeleteAsync();
        Assert.Equal(0, pauses.Count);
    }
}
