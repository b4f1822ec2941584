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
/// Each collection is two: what the first finds dead but finalizable (socket handles and the graph they hold, 3.3 MB
/// after 10,000 left) is only queued for its finalizer, so a second collection after the finalizers ran frees it.
/// And the thread pool's workers that the burst created retire only after 20 s idle; what they held natively (glibc
/// arenas, 2.5-3 MB after 10,000 left) is freed after the trim. So after a burst has gone the reclaimer watches the
/// pool for up to <see cref="RetireWatch"/>: once it has fewer threads than at the collection and that number held for
/// <see cref="RetireQuiet"/>, it collects and trims once more. A burst that arrived injects workers too (10,000 MQTT
/// sessions: 17 -> 27-41 threads); once they retire, glibc keeps what they and their exit freed (0.4-0.75 KB per
/// session, the part of the resident figure that moved from run to run: docs/benchmarks.md, rss1), so the pool is
/// watched after an arrival as well, and then only the C heap is trimmed: the GC heap was compacted at the arrival and
/// the connections still hold it, so a second full collection would pause for nothing.
/// The JIT keeps memory of its own: the tier-1 compilations that follow a burst (the connections' code, then the
/// periodic timers' once they were called 30 times) take their scratch slabs from the C heap, and the runtime keeps up
/// to 16 MB of freed slabs cached (<c>JitHostMaxSlabCache</c>), releasing them only when the finalizer thread wakes
/// twice at least 2 s apart, which an idle server's finalizer never does. At 1,000 MQTT sessions a batch of tier-1
/// compilations ~26 s after the burst took 2.3-4 MB of new C heap right after the arrival's trim, and kept it
/// (docs/benchmarks.md, once1). So within the watch after an arrival, once the JIT has compiled since the last trim
/// and then compiled nothing for <see cref="JitQuiet"/>, the finalizer is woken twice <see cref="JitFlushGap"/> apart
/// (<see cref="GC.WaitForPendingFinalizers"/>, no collection) and the C heap is trimmed after the second.
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

    /// <summary>How long after a burst has gone the pool's retiring workers are waited for (the pool retires a worker 20 s idle).</summary>
    public static readonly TimeSpan RetireWatch = TimeSpan.FromSeconds(60);

    /// <summary>How long the pool's thread count must hold after falling: the idle workers retire within a second or two.</summary>
    public static readonly TimeSpan RetireQuiet = TimeSpan.FromSeconds(1);

    /// <summary>
    /// How long the pool's thread count must hold after falling before the C heap is trimmed after an arrival: a
    /// second or two after the last worker exited, the C heap grew by ~2.7 MB used briefly and freed again (10,000 MQTT
    /// sessions, rss1), which a trim at <see cref="RetireQuiet"/> came too early for.
    /// </summary>
    public static readonly TimeSpan ArrivalRetireQuiet = TimeSpan.FromSeconds(5);

    /// <summary>
    /// How long the JIT must have compiled nothing before its freed scratch memory is given back: a tier-up batch
    /// compiles within a few hundred ms; a batch split by a pause costs one more trim, which is cheap.
    /// </summary>
    public static readonly TimeSpan JitQuiet = TimeSpan.FromSeconds(1);

    /// <summary>
    /// The gap between the two wakes of the finalizer thread before a trim: the runtime frees the JIT's cached slabs
    /// at a wake only once they were cached at an earlier wake at least 2 s before.
    /// </summary>
    public static readonly TimeSpan JitFlushGap = TimeSpan.FromMilliseconds(2100);

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

    // After a burst has gone: until when the pool's retiring workers are watched (0: not watching), the pool's
    // threads at the collection, and the last count seen with when it was first seen.
    private long watchRetireUntil;
    private bool trimOnlyAtRetire;
    private int threadsAtCollection;
    private int threadsSeen;
    private long threadsSeenSince;

    // After an arrival: whether the retiring workers were trimmed after, the JIT's compiled-method count at the last
    // collection or trim, the last count seen with when it was first seen, and when the first of the two finalizer
    // wakes before a trim ran (0: none pending).
    private bool retireTrimmed;
    private long compiledAtReclaim;
    private long compiledSeen;
    private long compiledSeenSince;
    private long flushStartedAt;

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

    /// <summary>Trims of the C heap alone, after the workers an arrived burst created retired (tests read it).</summary>
    public int Trims { get; private set; }

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
                timer ??= new Timer(
                    static state => ((BurstReclaimer)state!).Tick(Environment.TickCount64, ThreadPool.ThreadCount, JitInfo.GetCompiledMethodCount()),
                    this,
                    Period,
                    Period);
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

    /// <summary>
    /// One look at the counts and at the thread pool's <paramref name="poolThreads"/>; collects when a burst has gone or
    /// arrived, or when the workers a burst that went created have retired; trims the C heap when those of a burst that
    /// arrived have, or when the JIT has compiled since then and gone quiet (<paramref name="compiledMethods"/>: the
    /// runtime's count). Returns whether it collected or trimmed.
    /// </summary>
    internal bool Tick(long now, int poolThreads, long compiledMethods = 0)
    {
        bool trimOnly;
        var startFlush = false;
        lock (gate)
        {
            if (compiledMethods != compiledSeen)
            {
                compiledSeen = compiledMethods;
                compiledSeenSince = now;
            }

            var burstGone = peak - open >= MinimumGone && open <= peak / 2;
            var leftQuietly = (burstGone || unsent >= MinimumUnsent) && now - lastCloseAt >= (long)Quiet.TotalMilliseconds;
            var arrivedQuietly = open - settled >= MinimumArrived && now - Math.Max(lastOpenAt, lastCloseAt) >= (long)ArrivalQuiet.TotalMilliseconds;
            if (poolThreads != threadsSeen)
            {
                threadsSeen = poolThreads;
                threadsSeenSince = now;
            }

            if (watchRetireUntil != 0 && now > watchRetireUntil)
            {
                watchRetireUntil = 0;
            }

            var retireQuiet = trimOnlyAtRetire ? ArrivalRetireQuiet : RetireQuiet;
            var retired = watchRetireUntil != 0 && poolThreads < threadsAtCollection && now - threadsSeenSince >= (long)retireQuiet.TotalMilliseconds;
            if (!leftQuietly && !arrivedQuietly && trimOnlyAtRetire && (flushStartedAt != 0 || watchRetireUntil != 0))
            {
                // After an arrival only the C heap is trimmed, once the workers retired and whenever the JIT compiled
                // since and went quiet; the JIT's cached slabs are released first (two finalizer wakes).
                if (flushStartedAt != 0)
                {
                    if (now - flushStartedAt < (long)JitFlushGap.TotalMilliseconds)
                    {
                        return false;
                    }

                    flushStartedAt = 0;
                    Trims++;
                    trimOnly = true;
                }
                else
                {
                    var jitQuiet = now - compiledSeenSince >= (long)JitQuiet.TotalMilliseconds;
                    var workersRetired = retired && !retireTrimmed;
                    if (!jitQuiet || (!workersRetired && compiledMethods == compiledAtReclaim))
                    {
                        return false;
                    }

                    retireTrimmed |= workersRetired;
                    compiledAtReclaim = compiledMethods;
                    flushStartedAt = Math.Max(now, 1);
                    startFlush = true;
                    trimOnly = true;
                }
            }
            else if (!leftQuietly && !arrivedQuietly && !retired)
            {
                return false;
            }
            else
            {
                // A burst leaves workers that retire later: watch for them (again after each burst); after one that
                // arrived, the branch above trims. After one that went, their retirement is collected once.
                trimOnly = false;
                watchRetireUntil = leftQuietly || arrivedQuietly ? now + (long)RetireWatch.TotalMilliseconds : 0;
                trimOnlyAtRetire = !leftQuietly;
                threadsAtCollection = poolThreads;
                retireTrimmed = false;
                compiledAtReclaim = compiledMethods;
                flushStartedAt = 0;
                peak = open;
                settled = open;
                unsent = 0;
                Collections++;
            }
        }

        if (startFlush)
        {
            // The first wake: the runtime moves the JIT's cached slabs to its previous list (frees those cached earlier).
            GC.WaitForPendingFinalizers();
            return false;
        }

        if (trimOnly)
        {
            // The second wake frees what the first moved; then glibc gives the free pages back.
            GC.WaitForPendingFinalizers();
            TrimNativeHeap();
        }
        else
        {
            Collect();
        }

        return true;
    }

    private void Collect()
    {
        // The segments closed connections left in the pool (a storm's cut-off subscribers) go with the rest.
        pool?.ReleaseAll();
        GCSettings.LargeObjectHeapCompactionMode = GCLargeObjectHeapCompactionMode.CompactOnce;
        GC.Collect(GC.MaxGeneration, GCCollectionMode.Aggressive, blocking: true, compacting: true);

        // What the collection found dead but finalizable is freed by the next one, once its finalizer ran.
        GC.WaitForPendingFinalizers();
        GCSettings.LargeObjectHeapCompactionMode = GCLargeObjectHeapCompactionMode.CompactOnce;
        GC.Collect(GC.MaxGeneration, GCCollectionMode.Aggressive, blocking: true, compacting: true);
        TrimNativeHeap();
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
