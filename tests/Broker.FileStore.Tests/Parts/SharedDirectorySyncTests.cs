using Broker.Storage.FileStore.Internal.Io;

namespace Broker.FileStore.Tests.Parts;

/// <summary>
/// <see cref="SharedDirectorySync"/>: callers that ask while a sync runs share the next one, and none returns before a
/// sync that started after it asked.
/// </summary>
public sealed class SharedDirectorySyncTests
{
    private const string Obs = "/sim/obs";

    [Fact(Timeout = 30_000)]
    public async Task Callers_arriving_during_a_sync_share_the_next_one()
    {
        var disk = StoreParts.NewDisk();
        disk.CreateDirectory(Obs);
        using var first = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        var calls = 0;
        disk.BeforeSyncDirectory = _ =>
        {
            if (Interlocked.Increment(ref calls) == 1)
            {
                first.Set();
                release.Wait(TimeSpan.FromSeconds(20));
            }
        };
        var shared = new SharedDirectorySync(disk, Obs);

        // Threads of their own: fifty callers blocked on pool threads would starve the pool.
        Task Caller() => Task.Factory.StartNew(shared.Sync, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
        var running = Caller();
        Assert.True(first.Wait(TimeSpan.FromSeconds(10)));
        const int Waiters = 20;
        var waiters = Enumerable.Range(0, Waiters).Select(_ => Caller()).ToArray();
        while (shared.Waiting < Waiters + 1)
        {
            await Task.Delay(5);
        }

        // Nobody behind the running sync may return on it: their entries may have been made after it started.
        Assert.DoesNotContain(waiters, w => w.IsCompleted);
        release.Set();
        await running;
        await Task.WhenAll(waiters);

        Assert.Equal(2, shared.Syncs);
        Assert.Equal(2, calls);
        Assert.Equal(0, shared.Waiting);
    }

    [Fact]
    public void A_failed_sync_throws_to_its_caller_and_the_next_caller_syncs_again()
    {
        var disk = StoreParts.NewDisk();
        disk.CreateDirectory(Obs);
        var shared = new SharedDirectorySync(disk, Obs);
        disk.FailSyncs = true;
        Assert.Throws<IOException>(shared.Sync);
        Assert.Equal(0, shared.Syncs);
        disk.FailSyncs = false;
        shared.Sync();
        Assert.Equal(1, shared.Syncs);
        Assert.Equal(0, shared.Waiting);
    }

    [Fact(Timeout = 30_000)]
    public async Task Asynchronous_callers_during_a_sync_share_the_next_one_and_none_completes_on_the_running_one()
    {
        var disk = StoreParts.NewDisk();
        disk.CreateDirectory(Obs);
        using var first = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        var calls = 0;
        disk.BeforeSyncDirectory = _ =>
        {
            if (Interlocked.Increment(ref calls) == 1)
            {
                first.Set();
                release.Wait(TimeSpan.FromSeconds(20));
            }
        };
        var shared = new SharedDirectorySync(disk, Obs);

        // The caller's thread neither syncs nor waits: the sync runs on the pool.
        var running = shared.SyncAsync();
        Assert.True(first.Wait(TimeSpan.FromSeconds(10)));
        const int Callers = 50;
        var later = Enumerable.Range(0, Callers).Select(_ => shared.SyncAsync()).ToArray();
        var blocking = Task.Factory.StartNew(shared.Sync, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
        while (shared.Waiting < Callers + 2)
        {
            await Task.Delay(5);
        }

        Assert.False(running.IsCompleted);
        Assert.DoesNotContain(later, w => w.IsCompleted);
        release.Set();
        await running;
        await Task.WhenAll(later);
        await blocking;

        Assert.Equal(2, shared.Syncs);
        Assert.Equal(2, calls);
        Assert.Equal(0, shared.Waiting);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_failed_asynchronous_sync_faults_its_callers_and_the_next_caller_syncs_again()
    {
        var disk = StoreParts.NewDisk();
        disk.CreateDirectory(Obs);
        var shared = new SharedDirectorySync(disk, Obs);
        disk.FailSyncs = true;
        await Assert.ThrowsAsync<IOException>(shared.SyncAsync);
        disk.FailSyncs = false;
        await shared.SyncAsync();
        Assert.Equal(1, shared.Syncs);
        Assert.Equal(0, shared.Waiting);
    }
}
