using Broker.Core.Internal.Transport;

namespace Broker.Core.Tests.Transport;

/// <summary>
/// The compacting collection after a burst of clients has gone (issue 25): only once enough of them and half the peak
/// have closed, and the closes have stopped; once per burst. And after a burst has arrived, once the opens have stopped.
/// </summary>
public sealed class BurstReclaimerTests
{
    private static readonly long QuietMs = (long)BurstReclaimer.Quiet.TotalMilliseconds;

    private static readonly long RetireQuietMs = (long)BurstReclaimer.RetireQuiet.TotalMilliseconds;

    private static readonly long ArrivalRetireQuietMs = (long)BurstReclaimer.ArrivalRetireQuiet.TotalMilliseconds;

    private static readonly long JitQuietMs = (long)BurstReclaimer.JitQuiet.TotalMilliseconds;

    private static readonly long FlushGapMs = (long)BurstReclaimer.JitFlushGap.TotalMilliseconds;

    // The thread pool's size where it does not matter.
    private const int Threads = 8;

    [Fact]
    public void A_burst_that_has_gone_is_collected_once_after_the_quiet_period()
    {
        var reclaimer = new BurstReclaimer(timed: false);
        Open(reclaimer, BurstReclaimer.MinimumGone + 10);
        Close(reclaimer, BurstReclaimer.MinimumGone + 5);
        var closedAt = Environment.TickCount64;

        Assert.False(reclaimer.Tick(closedAt, Threads));
        Assert.True(reclaimer.Tick(closedAt + QuietMs + 1000, Threads));
        Assert.Equal(1, reclaimer.Collections);

        // The peak starts again from what is open: nothing more to give back.
        Assert.False(reclaimer.Tick(closedAt + (2 * QuietMs) + 1000, Threads));
        Assert.Equal(1, reclaimer.Collections);
    }

    [Fact]
    public void Fewer_than_the_minimum_or_less_than_half_gone_is_left_alone()
    {
        var few = new BurstReclaimer(timed: false);
        Open(few, BurstReclaimer.MinimumGone - 1);
        Close(few, BurstReclaimer.MinimumGone - 1);
        Assert.False(few.Tick(Environment.TickCount64 + QuietMs + 1000, Threads));

        // (Their arrival is collected first, as a burst that arrived.)
        var mostStay = new BurstReclaimer(timed: false);
        Open(mostStay, 4 * BurstReclaimer.MinimumGone);
        Assert.True(mostStay.Tick(Environment.TickCount64 + QuietMs + 1000, Threads));
        Close(mostStay, BurstReclaimer.MinimumGone + 1);
        Assert.False(mostStay.Tick(Environment.TickCount64 + QuietMs + 1000, Threads));
        Assert.Equal(1, few.Collections + mostStay.Collections);
    }

    [Fact]
    public void Slow_consumers_cut_off_with_their_buffers_full_are_collected_after_the_quiet_period()
    {
        var reclaimer = new BurstReclaimer(timed: false);
        Open(reclaimer, 10);
        reclaimer.Closed(BurstReclaimer.MinimumUnsent / 2);
        Assert.False(reclaimer.Tick(Environment.TickCount64 + QuietMs + 1000, Threads));

        reclaimer.Closed(BurstReclaimer.MinimumUnsent / 2);
        var closedAt = Environment.TickCount64;
        Assert.False(reclaimer.Tick(closedAt, Threads));
        Assert.True(reclaimer.Tick(closedAt + QuietMs + 1000, Threads));
        Assert.False(reclaimer.Tick(closedAt + (2 * QuietMs) + 1000, Threads));
        Assert.Equal(1, reclaimer.Collections);
    }

    [Fact]
    public void A_burst_that_arrived_is_collected_once_after_the_opens_stopped()
    {
        var arrivalQuietMs = (long)BurstReclaimer.ArrivalQuiet.TotalMilliseconds;
        var reclaimer = new BurstReclaimer(timed: false);
        Open(reclaimer, BurstReclaimer.MinimumArrived - 1);
        Assert.False(reclaimer.Tick(Environment.TickCount64 + arrivalQuietMs + 1000, Threads));

        Open(reclaimer, 1);
        var openedAt = Environment.TickCount64;
        Assert.False(reclaimer.Tick(openedAt, Threads));
        Assert.True(reclaimer.Tick(openedAt + arrivalQuietMs + 1000, Threads));
        Assert.Equal(1, reclaimer.Collections);

        // Counting starts from what is open: a few more are not worth another pause, nor is the same set later.
        Open(reclaimer, 10);
        Assert.False(reclaimer.Tick(Environment.TickCount64 + arrivalQuietMs + 1000, Threads));
        Assert.Equal(1, reclaimer.Collections);
    }

    [Fact]
    public void After_a_burst_has_gone_the_workers_it_created_retiring_are_collected_once()
    {
        var reclaimer = new BurstReclaimer(timed: false);
        Open(reclaimer, BurstReclaimer.MinimumGone + 10);
        Close(reclaimer, BurstReclaimer.MinimumGone + 10);
        var at = Environment.TickCount64 + QuietMs + 1000;
        Assert.True(reclaimer.Tick(at, poolThreads: 30));

        // The pool as large as at the collection, then just fallen: not yet.
        Assert.False(reclaimer.Tick(at + 5000, poolThreads: 30));
        Assert.False(reclaimer.Tick(at + 21_000, poolThreads: 14));

        // Fallen and held: once more, and only once.
        Assert.True(reclaimer.Tick(at + 21_000 + RetireQuietMs, poolThreads: 14));
        Assert.False(reclaimer.Tick(at + 25_000, poolThreads: 12));
        Assert.False(reclaimer.Tick(at + 25_000 + RetireQuietMs, poolThreads: 12));
        Assert.Equal(2, reclaimer.Collections);
    }

    [Fact]
    public void Workers_retiring_after_the_watch_are_left_alone()
    {
        var watchMs = (long)BurstReclaimer.RetireWatch.TotalMilliseconds;
        var gone = new BurstReclaimer(timed: false);
        Open(gone, BurstReclaimer.MinimumGone + 10);
        Close(gone, BurstReclaimer.MinimumGone + 10);
        var at = Environment.TickCount64 + QuietMs + 1000;
        Assert.True(gone.Tick(at, poolThreads: 30));
        Assert.False(gone.Tick(at + watchMs + 1, poolThreads: 10));
        Assert.False(gone.Tick(at + watchMs + 1 + RetireQuietMs, poolThreads: 10));
        Assert.Equal(1, gone.Collections);
        Assert.Equal(0, gone.Trims);
    }

    [Fact]
    public void After_a_burst_has_arrived_the_workers_it_created_retiring_trim_the_C_heap_once_without_a_collection()
    {
        // The burst's workers retire 20 s idle; what glibc kept of them was 0.4-0.75 KB per MQTT session (rss1).
        var reclaimer = new BurstReclaimer(timed: false);
        Open(reclaimer, BurstReclaimer.MinimumArrived);
        var openedAt = Environment.TickCount64 + 1000;
        Assert.True(reclaimer.Tick(openedAt, poolThreads: 30));
        Assert.Equal(1, reclaimer.Collections);

        Assert.False(reclaimer.Tick(openedAt + 21_000, poolThreads: 10));
        Assert.False(reclaimer.Tick(openedAt + 21_000 + RetireQuietMs, poolThreads: 10));

        // The first finalizer wake, then the trim after the second, JitFlushGap later.
        Assert.False(reclaimer.Tick(openedAt + 21_000 + ArrivalRetireQuietMs, poolThreads: 10));
        Assert.Equal(0, reclaimer.Trims);
        Assert.False(reclaimer.Tick(openedAt + 21_000 + ArrivalRetireQuietMs + FlushGapMs - 1, poolThreads: 10));
        Assert.True(reclaimer.Tick(openedAt + 21_000 + ArrivalRetireQuietMs + FlushGapMs, poolThreads: 10));
        Assert.Equal(1, reclaimer.Collections);
        Assert.Equal(1, reclaimer.Trims);

        // Once per burst: more retiring later is left alone, and the connections still open are not counted again.
        Assert.False(reclaimer.Tick(openedAt + 30_000, poolThreads: 8));
        Assert.False(reclaimer.Tick(openedAt + 30_000 + ArrivalRetireQuietMs, poolThreads: 8));
        Assert.Equal(1, reclaimer.Trims);
        Assert.Equal(1, reclaimer.Collections);
    }

    [Fact]
    public void After_an_arrival_each_batch_of_JIT_compilations_is_trimmed_after_once_the_JIT_is_quiet()
    {
        // Tier-1 compilations after the burst took 2.3-4 MB of C heap that the runtime's slab cache kept (once1).
        var reclaimer = new BurstReclaimer(timed: false);
        Open(reclaimer, BurstReclaimer.MinimumArrived);
        var at = Environment.TickCount64 + 1000;
        Assert.True(reclaimer.Tick(at, poolThreads: 20, compiledMethods: 1000));

        // Nothing compiled and no worker gone: nothing to do.
        Assert.False(reclaimer.Tick(at + 5000, poolThreads: 20, compiledMethods: 1000));

        // A batch: no trim while the JIT is still compiling, then the two wakes and the trim.
        Assert.False(reclaimer.Tick(at + 6000, poolThreads: 20, compiledMethods: 1020));
        Assert.False(reclaimer.Tick(at + 6000 + JitQuietMs - 1, poolThreads: 20, compiledMethods: 1020));
        Assert.False(reclaimer.Tick(at + 6000 + JitQuietMs, poolThreads: 20, compiledMethods: 1020));
        Assert.True(reclaimer.Tick(at + 6000 + JitQuietMs + FlushGapMs, poolThreads: 20, compiledMethods: 1020));
        Assert.Equal(1, reclaimer.Trims);

        // Not again for the same count; again after a later batch within the watch.
        Assert.False(reclaimer.Tick(at + 15_000, poolThreads: 20, compiledMethods: 1020));
        Assert.False(reclaimer.Tick(at + 16_000, poolThreads: 20, compiledMethods: 1030));
        Assert.False(reclaimer.Tick(at + 16_000 + JitQuietMs, poolThreads: 20, compiledMethods: 1030));
        Assert.True(reclaimer.Tick(at + 16_000 + JitQuietMs + FlushGapMs, poolThreads: 20, compiledMethods: 1030));
        Assert.Equal(2, reclaimer.Trims);
        Assert.Equal(1, reclaimer.Collections);

        // After the watch, compilations are left alone.
        var afterWatch = at + (long)BurstReclaimer.RetireWatch.TotalMilliseconds + 1;
        Assert.False(reclaimer.Tick(afterWatch, poolThreads: 20, compiledMethods: 1040));
        Assert.False(reclaimer.Tick(afterWatch + JitQuietMs + FlushGapMs, poolThreads: 20, compiledMethods: 1040));
        Assert.Equal(2, reclaimer.Trims);
    }

    [Fact]
    public void After_an_arrival_the_workers_retiring_after_the_watch_are_left_alone()
    {
        var watchMs = (long)BurstReclaimer.RetireWatch.TotalMilliseconds;
        var reclaimer = new BurstReclaimer(timed: false);
        Open(reclaimer, BurstReclaimer.MinimumArrived);
        var openedAt = Environment.TickCount64 + 1000;
        Assert.True(reclaimer.Tick(openedAt, poolThreads: 30));
        Assert.False(reclaimer.Tick(openedAt + watchMs + 1, poolThreads: 10));
        Assert.False(reclaimer.Tick(openedAt + watchMs + 1 + ArrivalRetireQuietMs, poolThreads: 10));
        Assert.Equal(0, reclaimer.Trims);
    }

    private static void Open(BurstReclaimer reclaimer, int count)
    {
        for (var i = 0; i < count; i++)
        {
            reclaimer.Opened();
        }
    }

    private static void Close(BurstReclaimer reclaimer, int count)
    {
        for (var i = 0; i < count; i++)
        {
            reclaimer.Closed(unsentBytes: 0);
        }
    }
}
