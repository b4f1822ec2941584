using System.Buffers;
using System.IO.Pipelines;
using Broker.Abstractions;
using Broker.Core.Internal.Transport;

namespace Broker.Core.Tests.Transport;

/// <summary>
/// The output pipes' segment pool (issue 24 item 3): a closed connection's segments serve the next connection instead
/// of becoming garbage, blocks nobody needed for a whole period are released, and the reclaimer empties it before its
/// collection, so it never keeps memory the way a pool that never gives back would.
/// </summary>
public sealed class OutputSegmentPoolTests
{
    private static readonly long PeriodMs = (long)OutputSegmentPool.IdlePeriod.TotalMilliseconds;

    [Fact(Timeout = 30_000)]
    public async Task A_closed_connections_segments_are_the_next_connections_segments()
    {
        var pool = new OutputSegmentPool(timed: false);
        var settings = new TransportSettings { MaxPendingOutputBytes = 4L * 1024 * 1024, OutputPool = pool };

        // A connection that buffered 1 MiB for a peer that never read, then was closed (both sides of its pipe done).
        var first = new OutputBuffer(settings, readerScheduler: PipeScheduler.Inline);
        var chunk = new byte[1000];
        for (var i = 0; i < 1024; i++)
        {
            first.Writer.Write(chunk);
        }

        await first.Writer.FlushAsync();
        await first.Writer.CompleteAsync();
        await first.Reader.CompleteAsync();
        var returned = pool.Pooled;
        Assert.InRange(returned, 1_024_000 / OutputSegmentPool.BlockSize, (1_024_000 / OutputSegmentPool.BlockSize) + 1);

        // The next connection's output takes them before any new one.
        var second = new OutputBuffer(settings, readerScheduler: PipeScheduler.Inline);
        for (var i = 0; i < 512; i++)
        {
            second.Writer.Write(chunk);
        }

        Assert.InRange(pool.Pooled, returned - (512_000 / OutputSegmentPool.BlockSize) - 1, returned - (512_000 / OutputSegmentPool.BlockSize));
        await second.Writer.CompleteAsync();
        await second.Reader.CompleteAsync();
        Assert.Equal(returned, pool.Pooled);
    }

    [Fact]
    public void Blocks_nobody_needed_for_a_whole_period_are_released_and_the_rest_kept()
    {
        var pool = new OutputSegmentPool(timed: false);
        var rented = Enumerable.Range(0, 10).Select(_ => pool.Rent()).ToList();
        rented.ForEach(b => b.Dispose());
        Assert.Equal(10, pool.Pooled);
        var start = Environment.TickCount64;

        // The first look starts a period; during it 4 are taken and given back, so 6 were never needed.
        Assert.Equal(0, pool.TrimIdle(start + PeriodMs));
        var busy = Enumerable.Range(0, 4).Select(_ => pool.Rent()).ToList();
        busy.ForEach(b => b.Dispose());
        Assert.Equal(0, pool.TrimIdle(start + PeriodMs + 10));
        Assert.Equal(6, pool.TrimIdle(start + (2 * PeriodMs)));
        Assert.Equal(4, pool.Pooled);

        // Nobody asks any more: the rest goes a period later.
        Assert.Equal(4, pool.TrimIdle(start + (3 * PeriodMs)));
        Assert.Equal(0, pool.Pooled);
    }

    [Fact]
    public void A_returned_block_is_reused_and_a_larger_request_is_refused()
    {
        var pool = new OutputSegmentPool(timed: false);
        var block = pool.Rent(100);
        Assert.Equal(OutputSegmentPool.BlockSize, block.Memory.Length);
        var array = System.Runtime.InteropServices.MemoryMarshal.TryGetArray<byte>(block.Memory, out var segment) ? segment.Array : null;
        block.Dispose();
        block.Dispose();
        Assert.Equal(1, pool.Pooled);

        using var again = pool.Rent();
        Assert.True(System.Runtime.InteropServices.MemoryMarshal.TryGetArray<byte>(again.Memory, out var reused));
        Assert.Same(array, reused.Array);
        Assert.Throws<ArgumentOutOfRangeException>(() => pool.Rent(OutputSegmentPool.BlockSize + 1));
    }

    [Fact]
    public void The_reclaimer_empties_the_pool_before_it_collects()
    {
        var pool = new OutputSegmentPool(timed: false);
        var reclaimer = new BurstReclaimer(timed: false, pool);
        Enumerable.Range(0, 8).Select(_ => pool.Rent()).ToList().ForEach(b => b.Dispose());
        reclaimer.Opened();
        reclaimer.Closed(BurstReclaimer.MinimumUnsent);

        Assert.False(reclaimer.Tick(Environment.TickCount64, poolThreads: 4));
        Assert.Equal(8, pool.Pooled);
        Assert.True(reclaimer.Tick(Environment.TickCount64 + (long)BurstReclaimer.Quiet.TotalMilliseconds + 1000, poolThreads: 4));
        Assert.Equal(0, pool.Pooled);
    }
}
