using Broker.Core.Internal.Transport;

namespace Broker.Core.Tests.Transport;

/// <summary>
/// The compacting collection after a burst of clients has gone (issue 25): only once enough of them and half the peak
/// have closed, and the closes have stopped; once per burst. And after a burst has arrived, once the opens have stopped.
/// </summary>
public sealed class BurstReclaimerTests
{
    private static readonly long QuietMs = (long)BurstReclaimer.Quiet.TotalMilliseconds;

    [Fact]
    public void A_burst_that_has_gone_is_collected_once_after_the_quiet_period()
    {
        var reclaimer = new BurstReclaimer(timed: false);
        Open(reclaimer, BurstReclaimer.MinimumGone + 10);
        Close(reclaimer, BurstReclaimer.MinimumGone + 5);
        var closedAt = Environment.TickCount64;

        Assert.False(reclaimer.Tick(closedAt));
        Assert.True(reclaimer.Tick(closedAt + QuietMs + 1000));
        Assert.Equal(1, reclaimer.Collections);

        // The peak starts again from what is open: nothing more to give back.
        Assert.False(reclaimer.Tick(closedAt + (2 * QuietMs) + 1000));
        Assert.Equal(1, reclaimer.Collections);
    }

    [Fact]
    public void Fewer_than_the_minimum_or_less_than_half_gone_is_left_alone()
    {
        var few = new BurstReclaimer(timed: false);
        Open(few, BurstReclaimer.MinimumGone - 1);
        Close(few, BurstReclaimer.MinimumGone - 1);
        Assert.False(few.Tick(Environment.TickCount64 + QuietMs + 1000));

        // (Their arrival is collected first, as a burst that arrived.)
        var mostStay = new BurstReclaimer(timed: false);
        Open(mostStay, 4 * BurstReclaimer.MinimumGone);
        Assert.True(mostStay.Tick(Environment.TickCount64 + QuietMs + 1000));
        Close(mostStay, BurstReclaimer.MinimumGone + 1);
        Assert.False(mostStay.Tick(Environment.TickCount64 + QuietMs + 1000));
        Assert.Equal(1, few.Collections + mostStay.Collections);
    }

    [Fact]
    public void Slow_consumers_cut_off_with_their_buffers_full_are_collected_after_the_quiet_period()
    {
        var reclaimer = new BurstReclaimer(timed: false);
        Open(reclaimer, 10);
        reclaimer.Closed(BurstReclaimer.MinimumUnsent / 2);
        Assert.False(reclaimer.Tick(Environment.TickCount64 + QuietMs + 1000));

        reclaimer.Closed(BurstReclaimer.MinimumUnsent / 2);
        var closedAt = Environment.TickCount64;
        Assert.False(reclaimer.Tick(closedAt));
        Assert.True(reclaimer.Tick(closedAt + QuietMs + 1000));
        Assert.False(reclaimer.Tick(closedAt + (2 * QuietMs) + 1000));
        Assert.Equal(1, reclaimer.Collections);
    }

    [Fact]
    public void A_burst_that_arrived_is_collected_once_after_the_opens_stopped()
    {
        var arrivalQuietMs = (long)BurstReclaimer.ArrivalQuiet.TotalMilliseconds;
        var reclaimer = new BurstReclaimer(timed: false);
        Open(reclaimer, BurstReclaimer.MinimumArrived - 1);
        Assert.False(reclaimer.Tick(Environment.TickCount64 + arrivalQuietMs + 1000));

        Open(reclaimer, 1);
        var openedAt = Environment.TickCount64;
        Assert.False(reclaimer.Tick(openedAt));
        Assert.True(reclaimer.Tick(openedAt + arrivalQuietMs + 1000));
        Assert.Equal(1, reclaimer.Collections);

        // Counting starts from what is open: a few more are not worth another pause, nor is the same set later.
        Open(reclaimer, 10);
        Assert.False(reclaimer.Tick(Environment.TickCount64 + arrivalQuietMs + 1000));
        Assert.Equal(1, reclaimer.Collections);
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
