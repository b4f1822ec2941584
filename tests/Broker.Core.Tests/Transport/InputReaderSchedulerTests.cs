using System.Buffers;
using System.IO.Pipelines;
using Broker.Core.Internal.Transport;

namespace Broker.Core.Tests.Transport;

/// <summary>
/// A receive loop on the socket engine's thread has a small read parsed there, before its flush returns, and a large
/// one parsed on a worker while it receives again; a receive loop on a worker parses every read where it is.
/// </summary>
public sealed class InputReaderSchedulerTests
{
    [Fact(Timeout = 20_000)]
    public async Task A_read_flushed_to_be_parsed_here_runs_the_reader_on_the_flushing_thread_before_the_flush_returns()
    {
        var (read, ranBeforeReturn) = await FlushOnOwnThread(here: true);

        Assert.True(read.OnFlushingThread, "the reader ran on another thread");
        Assert.True(ranBeforeReturn, "the reader had not run when the flush returned");
    }

    [Fact(Timeout = 20_000)]
    public async Task A_read_flushed_to_be_parsed_elsewhere_runs_the_reader_on_a_worker()
    {
        var (read, _) = await FlushOnOwnThread(here: false);

        Assert.False(read.OnFlushingThread);
        Assert.True(read.OnPoolThread);
    }

    [Fact(Timeout = 20_000)]
    public async Task Only_a_small_read_is_parsed_on_a_thread_outside_the_pool_and_every_read_on_a_worker()
    {
        var outside = new TaskCompletionSource<(bool Small, bool Large)>(TaskCreationOptions.RunContinuationsAsynchronously);
        var thread = new Thread(() => outside.SetResult((InputReaderScheduler.ParseHere(small: true), InputReaderScheduler.ParseHere(small: false))));
        thread.Start();
        Assert.Equal((true, false), await outside.Task);

        var onWorker = await Task.Run(() => (InputReaderScheduler.ParseHere(small: true), InputReaderScheduler.ParseHere(small: false)));
        Assert.Equal((true, true), onWorker);
    }

    // Flushes 100 bytes from a thread of its own (as the socket engine's epoll thread is: not a pool thread) into a
    // pipe whose reader waits, as a connection's read loop does.
    private static async Task<((bool OnFlushingThread, bool OnPoolThread) Read, bool RanBeforeReturn)> FlushOnOwnThread(bool here)
    {
        var pipe = new Pipe(new PipeOptions(
            readerScheduler: InputReaderScheduler.Instance,
            writerScheduler: PipeScheduler.Inline,
            useSynchronizationContext: false));
        var flushingThread = 0;
        var read = ReadOnce(pipe.Reader, () => flushingThread);
        var flushed = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        var thread = new Thread(() =>
        {
            flushingThread = Environment.CurrentManagedThreadId;
            pipe.Writer.Write(new byte[100]);
            _ = InputReaderScheduler.FlushAsync(pipe.Writer, here).AsTask();
            flushed.SetResult(read.IsCompleted);
        });
        thread.Start();
        var ranBeforeReturn = await flushed.Task;
        return (await read, ranBeforeReturn);
    }

    private static async Task<(bool OnFlushingThread, bool OnPoolThread)> ReadOnce(PipeReader reader, Func<int> flushingThread)
    {
        var result = await reader.ReadAsync().ConfigureAwait(false);
        var where = (Environment.CurrentManagedThreadId == flushingThread(), Thread.CurrentThread.IsThreadPoolThread);
        reader.AdvanceTo(result.Buffer.End);
        return where;
    }
}
