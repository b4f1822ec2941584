using System.IO.Pipelines;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Transport;
using Broker.Core.Tests.Clients;

namespace Broker.Core.Tests.Transport;

/// <summary>
/// A read loop's small batch is sent by the producer's own thread (no worker woken for one send); a large one, or one
/// flushed outside a read loop's batch, by a worker.
/// </summary>
public sealed class SendLoopSchedulerTests
{
    [Fact(Timeout = 20_000)]
    public async Task A_small_batch_runs_the_send_loop_on_the_flushing_thread_before_the_flush_returns()
    {
        var (output, send, flushing) = OutputWithSendLoop();
        Append(output, 200);

        flushing.Begin();
        var outer = SendLoopScheduler.BeginBatch();
        _ = output.Flush(null!, out var slowConsumer);
        SendLoopScheduler.EndBatch(outer);
        flushing.End();

        Assert.False(slowConsumer);
        Assert.True(send.IsCompleted, "the send loop did not run inside Flush");
        Assert.Equal((true, 200L), await send);
    }

    [Fact(Timeout = 20_000)]
    public async Task A_large_batch_runs_the_send_loop_on_a_worker()
    {
        var (output, send, flushing) = OutputWithSendLoop();
        Append(output, 64 * 1024);

        flushing.Begin();
        var outer = SendLoopScheduler.BeginBatch();
        _ = output.Flush(null!, out _);
        SendLoopScheduler.EndBatch(outer);
        flushing.End();

        Assert.Equal((false, 64 * 1024L), await send);
    }

    [Fact(Timeout = 20_000)]
    public async Task A_small_batch_outside_a_read_loop_batch_runs_the_send_loop_on_a_worker()
    {
        // An internal client flushes under its publish lock: a send made there could close a connection inline.
        var (output, send, flushing) = OutputWithSendLoop();
        Append(output, 200);

        flushing.Begin();
        _ = output.Flush(null!, out _);
        flushing.End();

        Assert.Equal((false, 200L), await send);
    }

    [Fact(Timeout = 20_000)]
    public async Task Outside_a_flush_the_scheduler_queues_to_the_thread_pool()
    {
        var flushing = new FlushProbe();
        var ran = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);

        flushing.Begin();
        SendLoopScheduler.Instance.Schedule(_ => ran.SetResult(flushing.OnFlushingThread), null);
        SendLoopScheduler.RunKept();
        flushing.End();

        Assert.False(await ran.Task);
    }

    private static (ConnectionOutput Output, Task<(bool Inline, long Bytes)> Send, FlushProbe Flushing) OutputWithSendLoop()
    {
        var pipe = new Pipe(new PipeOptions(
            readerScheduler: SendLoopScheduler.Instance,
            writerScheduler: PipeScheduler.Inline,
            pauseWriterThreshold: 0,
            useSynchronizationContext: false));
        var connection = new FakeConnection();
        var flushing = new FlushProbe();

        // Started here, so it waits on the pipe before anything is flushed, as a connection's send loop does.
        var send = ReadOnce(pipe.Reader, flushing);
        return (new ConnectionOutput(connection, pipe.Writer), send, flushing);
    }

    private static async Task<(bool Inline, long Bytes)> ReadOnce(PipeReader reader, FlushProbe flushing)
    {
        var result = await reader.ReadAsync().ConfigureAwait(false);
        var read = (flushing.OnFlushingThread, result.Buffer.Length);
        reader.AdvanceTo(result.Buffer.End);
        return read;
    }

    // Whether code runs on the test's thread while it is inside the call between Begin and End.
    private sealed class FlushProbe
    {
        private volatile int thread;

        public bool OnFlushingThread => thread == Environment.CurrentManagedThreadId;

        public void Begin() => thread = Environment.CurrentManagedThreadId;

        public void End() => thread = 0;
    }

    private static void Append(ConnectionOutput output, int bytes)
    {
        lock (output.Gate)
        {
            output.Write(new byte[bytes]);
            output.AddUnflushed(bytes);
        }
    }
}
