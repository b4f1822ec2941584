using System.Buffers;
using System.IO.Pipelines;
using System.Net.Sockets;
using System.Reflection;
using Broker.Abstractions;
using Broker.Core.Internal.Transport;

namespace Broker.Core.Tests.Transport;

/// <summary>
/// Where an on-demand connection's readiness is handled (<see cref="EpollSocket"/>, docs/benchmarks.md "ws3"): during a
/// connection's set-up reads on a worker (a CONNECT's password check must not stall the engine's thread), after them on
/// the engine's thread itself, which then receives at most about <see cref="EpollSocket.BytesPerDispatch"/> before the
/// stream goes on on a worker.
/// </summary>
public sealed class EpollDispatchTests
{
    [Fact(Timeout = 30_000)]
    public async Task Set_up_reads_are_parsed_on_a_worker_and_later_reads_on_the_epoll_thread()
    {
        if (EpollEngine.Shared is null)
        {
            // Off Linux (or switched off) the runtime's sockets read on demand; nothing to check.
            return;
        }

        var (connection, peer) = await ConnectAsync();
        await using var _ = connection;
        using var __ = peer;
        var input = connection.Transport.Input;
        var threads = new List<string?>();
        for (var i = 0; i < ReceiveSizing.SetupReads + 2; i++)
        {
            var (result, thread) = await ReadWaitingAsync(input, () => peer.Send("PING\r\n"u8));
            threads.Add(thread);
            Assert.Equal("PING\r\n"u8.ToArray(), result.Buffer.ToArray());
            input.AdvanceTo(result.Buffer.End);
        }

        Assert.All(threads.Take(ReceiveSizing.SetupReads), thread => Assert.NotEqual("epoll", thread));
        Assert.All(threads.Skip(ReceiveSizing.SetupReads), thread => Assert.Equal("epoll", thread));
    }

    [Fact(Timeout = 30_000)]
    public async Task A_readiness_on_the_epoll_thread_receives_about_its_share_then_the_stream_goes_on_on_a_worker()
    {
        if (EpollEngine.Shared is null)
        {
            return;
        }

        var (connection, peer) = await ConnectAsync();
        await using var _ = connection;
        using var __ = peer;
        var socket = (Socket)typeof(SocketConnection).GetField("socket", BindingFlags.NonPublic | BindingFlags.Instance)!.GetValue(connection)!;
        socket.ReceiveBufferSize = 8 * 1024 * 1024;
        var input = connection.Transport.Input;
        for (var i = 0; i < ReceiveSizing.SetupReads; i++)
        {
            var (setup, _) = await ReadWaitingAsync(input, () => peer.Send("PING\r\n"u8));
            input.AdvanceTo(setup.Buffer.End);
        }

        // The epoll thread is held in the first read's continuation until everything sits in our socket's receive queue
        // (the sender's send returning is not enough: loopback moves what the receive window does not take yet later),
        // so without a share it would take all of it in one readiness, and after the share bytes are still waiting.
        const int total = 1024 * 1024;
        var reading = input.ReadAsync();
        long onEpollThread = 0;
        var afterShare = new TaskCompletionSource<(ReadResult Result, string? Thread)>(TaskCreationOptions.RunContinuationsAsynchronously);
        var observed = reading.AsTask().ContinueWith(
            first =>
            {
                var result = first.Result;
                var queued = SpinWait.SpinUntil(() => result.Buffer.Length + socket.Available >= total, TimeSpan.FromSeconds(10));
                Assert.True(queued, $"{result.Buffer.Length + socket.Available} of {total} bytes arrived");
                while (true)
                {
                    onEpollThread += result.Buffer.Length;
                    input.AdvanceTo(result.Buffer.End);
                    var next = input.ReadAsync();
                    if (!next.IsCompleted)
                    {
                        // Observed from here, before a worker can complete it: a continuation attached once it had
                        // completed would run on the attaching thread (the test's, which resumes here on the epoll
                        // thread) and say nothing of the receive's. One completed meanwhile calls back on a worker.
                        var awaiter = next.ConfigureAwait(false).GetAwaiter();
                        awaiter.UnsafeOnCompleted(() =>
                        {
                            try
                            {
                                afterShare.TrySetResult((awaiter.GetResult(), Thread.CurrentThread.Name));
                            }
                            catch (Exception ex)
                            {
                                afterShare.TrySetException(ex);
                            }
                        });
                        return Thread.CurrentThread.Name;
                    }

                    result = next.Result;
                }
            },
            TaskContinuationOptions.ExecuteSynchronously);
        peer.Send(new byte[total]);
        Assert.Equal("epoll", await observed);
        Assert.InRange(onEpollThread, EpollSocket.BytesPerDispatch, EpollSocket.BytesPerDispatch + ReceiveSizing.MaxSize);

        // The rest is received on a worker.
        var rest = onEpollThread;
        var (after, thread) = await afterShare.Task;
        Assert.NotEqual("epoll", thread);
        while (true)
        {
            rest += after.Buffer.Length;
            input.AdvanceTo(after.Buffer.End);
            if (rest >= total)
            {
                break;
            }

            after = await input.ReadAsync();
        }

        Assert.Equal(total, rest);
    }

    // Starts a read that has to wait, then sends; returns the read and the name of the thread its continuation ran on.
    private static async Task<(ReadResult Result, string? Thread)> ReadWaitingAsync(PipeReader input, Action send)
    {
        var reading = input.ReadAsync();
        Assert.False(reading.IsCompleted);
        var observed = reading.AsTask().ContinueWith(static read => (read.Result, Thread.CurrentThread.Name), TaskContinuationOptions.ExecuteSynchronously);
        send();
        return await observed;
    }

    private static async Task<(SocketConnection Connection, Socket Peer)> ConnectAsync()
    {
        var (connection, peer) = await TransportSocketPair.ConnectAsync();
        Assert.True(((IOnDemandTransport)connection.Transport).UseOnDemandInput());
        return (connection, peer);
    }
}
