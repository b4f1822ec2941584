using System.Runtime;
using System.Runtime.InteropServices;

namespace Broker.Core.Internal.Transport;

/// <summary>
/// Gives memory back to the system once a burst of connections has gone (issue 25). A client that lived a few seconds
/// is promoted to the GC's oldest generation and dies there; background collections free such objects without
/// compacting, and once the clients are gone the idle server allocates nothing, so no collection runs at all and the
/// resident set stays at its high-water mark (the soak's finding, docs/reliability.md). One shared timer, not one per
/// connection, watches the process's TCP connections: when at least <see cref="MinimumGone"/> of them and at least
/// half of the peak have closed, or connections closed with at least <see cref="MinimumUnsent"/> of output never sent
/// (slow consumers cut off at max_pending: their buffers died in the oldest generation too), and none has closed for
/// <see cref="Quiet"/>, it runs one compacting collection that returns the freed memory
/// (<see cref="GCCollectionMode.Aggressive"/>), and counting starts again from what is open. The collection is
/// blocking but small: what is left is the live heap of the clients still connected.
/// A burst that arrived is treated alike: setting a connection up leaves a few KB of garbage (CONNECT, INFO, auth,
/// the handshake's tasks) that the GC's first-generation budget (tens of MB, sized from the CPU cache) keeps resident
/// until something allocates again, which an idle server never does; so once <see cref="MinimumArrived"/> connections
/// more than at the last collection are open and none has opened or closed for <see cref="ArrivalQuiet"/>, the same
/// collection gives that garbage back (issue 25: at 1,000 idle connections it was half of what each one cost).
/// After the collection the C heap is trimmed too: what the runtime allocated natively for the connections (socket
/// and handle bookkeeping) was freed as they closed, but glibc keeps freed pages in its arenas until asked
/// (<c>malloc_trim</c>); at 10,000 connections gone that was 9-14 MB, most of what stayed above the baseline.
/// The output segment pool is emptied before the collection, so the segments closed connections left there (a
/// slow-consumer storm's cut-off subscribers) are returned with the rest.
/// </summary>
internal sealed partial class BurstReclaimer
{
    /// <summary>Connections that must have closed since the peak before a collection is worth its pause.</summary>
    public const int MinimumGone = 256;

    /// <summary>Output bytes dropped unsent by closed connections that are worth a collection (four slow consumers at the default max_pending).</summary>
    public const long MinimumUnsent = 256L * 1024 * 1024;

    /// <summary>Connections that must have opened since the last collection before collecting their set-up garbage is worth its pause.</summary>
    public const int MinimumArrived = 256;

    /// <summary>How long no connection may have closed: the burst is over, not still leaving.</summary>
    public static readonly TimeSpan Quiet = TimeSpan.FromSeconds(2);

    /// <summary>How long no connection may have opened or closed: an arriving burst is over.</summary>
    public static readonly TimeSpan ArrivalQuiet = TimeSpan.FromMilliseconds(500);

    private static readonly TimeSpan Period = TimeSpan.FromMilliseconds(250);

    private readonly Lock gate = new();
    private readonly bool timed;
    private readonly OutputSegmentPool? pool;
    private Timer? timer;
    private int open;
    private int peak;
    private int settled;
    private long lastCloseAt;
    private long lastOpenAt;
    private long unsent;

    /// <param name="timed">Whether the shared timer calls <see cref="Tick"/>; tests call it themselves.</param>
    /// <param name="pool">The output segment pool it empties before collecting, if any.</param>
    internal BurstReclaimer(bool timed, OutputSegmentPool? pool = null)
    {
        this.timed = timed;
        this.pool = pool;
    }

    /// <summary>The process's reclaimer: the GC is the process's, so is the decision.</summary>
    public static BurstReclaimer Shared { get; } = new(timed: true, OutputSegmentPool.Default);

    /// <summary>Collections run so far (tests and benchmarks read it).</summary>
    public int Collections { get; private set; }

    /// <summary>A connection was accepted.</summary>
    public void Opened()
    {
        lock (gate)
        {
            open++;
            peak = Math.Max(peak, open);
            lastOpenAt = Environment.TickCount64;
            if (timed)
            {
                timer ??= new Timer(static state => ((BurstReclaimer)state!).Tick(Environment.TickCount64), this, Period, Period);
            }
        }
    }

    /// <summary>A connection was closed and its buffers given back, <paramref name="unsentBytes"/> of them never sent.</summary>
    public void Closed(long unsentBytes)
    {
        lock (gate)
        {
            open--;
            unsent += Math.Max(unsentBytes, 0);
            lastCloseAt = Environment.TickCount64;
        }
    }

    /// <summary>One look at the counts; collects when a burst has gone or arrived. Returns whether it collected.</summary>
    internal bool Tick(long now)
    {
        lock (gate)
        {
            var burstGone = peak - open >= MinimumGone && open <= peak / 2;
            var leftQuietly = (burstGone || unsent >= MinimumUnsent) && now - lastCloseAt >= (long)Quiet.TotalMilliseconds;
            var arrivedQuietly = open - settled >= MinimumArrived && now - Math.Max(lastOpenAt, lastCloseAt) >= (long)ArrivalQuiet.TotalMilliseconds;
            if (!leftQuietly && !arrivedQuietly)
            {
                return false;
            }

            peak = open;
            settled = open;
            unsent = 0;
            Collections++;
        }

        pool?.ReleaseAll();
        GCSettings.LargeObjectHeapCompactionMode = GCLargeObjectHeapCompactionMode.CompactOnce;
        GC.Collect(GC.MaxGeneration, GCCollectionMode.Aggressive, blocking: true, compacting: true);
        TrimNativeHeap();
        return true;
    }

    // Set once malloc_trim turned out to be missing (a C library other than glibc): never tried again.
    private static bool trimUnavailable;

    /// <summary>Gives the C heap's free pages back to the system (glibc's <c>malloc_trim</c>); nothing elsewhere.</summary>
    private static void TrimNativeHeap()
    {
        if (!OperatingSystem.IsLinux() || trimUnavailable)
        {
            return;
        }

        try
        {
            _ = MallocTrim(0);
        }
        catch (Exception ex) when (ex is EntryPointNotFoundException or DllNotFoundException)
        {
            trimUnavailable = true;
        }
    }

    [LibraryImport("libc", EntryPoint = "malloc_trim")]
    private static partial int MallocTrim(nuint pad);
}
