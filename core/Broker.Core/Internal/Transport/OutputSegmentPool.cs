using System.Buffers;

namespace Broker.Core.Internal.Transport;

/// <summary>
/// The blocks of the listeners' output pipes (<see cref="Broker.Abstractions.TransportSettings.OutputPool"/>): a
/// segment a connection's pipe gives back (sent, or dropped when the connection closed) is the next segment of
/// another connection instead of garbage (issue 24 item 3). In the slow-consumer storm the stalled subscribers are
/// cut off one after the other while the rest still fill; with the shared array pool, which keeps a few dozen arrays
/// per size, a cut-off subscriber's 4 MiB became garbage in the GC's oldest generation, collected only after the
/// storm, while the others allocated new segments next to it: the storm's peak held both.
/// </summary>
/// <remarks>
/// Not a pool that never gives back: <see cref="TrimIdle"/> (its own timer, once a block exists) releases the blocks
/// nobody needed during a whole <see cref="IdlePeriod"/>, and <see cref="ReleaseAll"/> empties it before the
/// reclaimer's collection (<see cref="BurstReclaimer"/>), so what a burst of closes leaves here goes back to the
/// system with the rest. Blocks are plain arrays (not pinned): released ones are ordinary garbage that a compacting
/// collection returns. Blocks of 16 KiB, the output pipes' segment size; a pipe asks the shared array pool for
/// anything larger (the pipe does it, seeing <see cref="MaxBufferSize"/>). Kestrel's PinnedBlockMemoryPool, with its
/// eviction of idle blocks, is the model.
/// </remarks>
internal sealed class OutputSegmentPool : MemoryPool<byte>
{
    /// <summary>The size of every block: the output pipes' segment size.</summary>
    public const int BlockSize = 16 * 1024;

    /// <summary>How long pooled blocks must have gone unused before <see cref="TrimIdle"/> releases them.</summary>
    public static readonly TimeSpan IdlePeriod = TimeSpan.FromSeconds(1);

    private readonly Lock gate = new();
    private readonly bool timed;
    private Timer? timer;
    private Block[] free = new Block[64];
    private int count;

    // The fewest blocks pooled since the period began: that many were not needed during it.
    private int lowWater;
    private long periodStartedAt = Environment.TickCount64;

    /// <param name="timed">Whether a timer calls <see cref="TrimIdle"/> once the first block exists; tests call it themselves.</param>
    internal OutputSegmentPool(bool timed)
    {
        this.timed = timed;
    }

    /// <summary>The process's pool: the listeners' settings hand it to every output pipe they create.</summary>
    public static OutputSegmentPool Default { get; } = new(timed: true);

    public override int MaxBufferSize => BlockSize;

    /// <summary>Blocks pooled now (tests read it).</summary>
    public int Pooled
    {
        get
        {
            lock (gate)
            {
                return count;
            }
        }
    }

    public override IMemoryOwner<byte> Rent(int minBufferSize = -1)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThan(minBufferSize, BlockSize);
        return RentBlock();
    }

    /// <summary>A block; <see cref="Block.Dispose"/> gives it back.</summary>
    public Block RentBlock()
    {
        lock (gate)
        {
            if (count > 0)
            {
                var block = free[--count];
                free[count] = null!;
                lowWater = Math.Min(lowWater, count);
                block.Rented = true;
                return block;
            }

            if (timed)
            {
                timer ??= new Timer(static state => ((OutputSegmentPool)state!).TrimIdle(Environment.TickCount64), this, IdlePeriod, IdlePeriod);
            }
        }

        return new Block(this);
    }

    /// <summary>
    /// Releases the blocks that were pooled throughout the period that ended (nobody needed them), once a period has
    /// passed since the last look. Returns how many it released.
    /// </summary>
    public int TrimIdle(long now)
    {
        lock (gate)
        {
            if (now - periodStartedAt < (long)IdlePeriod.TotalMilliseconds)
            {
                return 0;
            }

            var idle = Math.Min(lowWater, count);
            Release(idle);
            periodStartedAt = now;
            lowWater = count;
            return idle;
        }
    }

    /// <summary>Releases every pooled block (before a collection that should return them). Returns how many.</summary>
    public int ReleaseAll()
    {
        lock (gate)
        {
            var released = count;
            Release(count);
            lowWater = 0;
            return released;
        }
    }

    protected override void Dispose(bool disposing)
    {
        // The shared pool lives as long as the process; nothing to do.
    }

    // Drops the blocks at the bottom of the stack (the longest unused); a smaller array once most are gone.
    private void Release(int blocks)
    {
        if (blocks <= 0)
        {
            return;
        }

        System.Array.Copy(free, blocks, free, 0, count - blocks);
        System.Array.Clear(free, count - blocks, blocks);
        count -= blocks;
        if (free.Length > 64 && count < free.Length / 4)
        {
            System.Array.Resize(ref free, Math.Max(64, free.Length / 2));
        }
    }

    private void Return(Block block)
    {
        lock (gate)
        {
            if (count == free.Length)
            {
                System.Array.Resize(ref free, free.Length * 2);
            }

            free[count++] = block;
        }
    }

    /// <summary>One 16 KiB array; disposing it (the pipe does, when it is done with the segment) gives it back.</summary>
    internal sealed class Block(OutputSegmentPool pool) : IMemoryOwner<byte>
    {
        // A plain array: the socket layer pins it or takes it as an array segment as it does the shared pool's.
        private readonly byte[] array = GC.AllocateUninitializedArray<byte>(BlockSize);

        public bool Rented { get; set; } = true;

        /// <summary>The block's bytes, for users that index arrays (the delivery queues).</summary>
        public byte[] Array => array;

        public Memory<byte> Memory => array;

        public void Dispose()
        {
            if (Rented)
            {
                Rented = false;
                pool.Return(this);
            }
        }
    }
}
