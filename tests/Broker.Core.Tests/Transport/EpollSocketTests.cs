using System.Buffers;
using System.IO.Pipelines;
using System.Net.Sockets;
using System.Reflection;
using Broker.Abstractions;
using Broker.Core.Internal.Transport;

namespace Broker.Core.Tests.Transport;

/// <summary>
/// On Linux, an on-demand connection is read and written through the process's epoll set (<see cref="EpollSocket"/>,
/// issue 25): its socket never makes the runtime's asynchronous state; output larger than the kernel's buffers waits
/// for EPOLLOUT and arrives whole and in order; the write deadline aborts a send waiting for EPOLLOUT; an abort ends a
/// waiting read; many connections at once each get their own input. The reader's and writer's other behaviour
/// (pieces, idle periods, reset, drain, graceful close) is tested by <see cref="SocketInputReaderTests"/> and
/// <see cref="SocketOutputWriterTests"/>, which run on this path on Linux.
/// </summary>
public sealed class EpollSocketTests
{
    [Fact(Timeout = 30_000)]
    public async Task An_on_demand_connection_on_Linux_never_makes_the_runtimes_socket_state()
    {
        if (!OperatingSystem.IsLinux())
        {
            // Elsewhere the runtime's sockets are the on-demand path (the fallback); nothing to check.
            return;
        }

        var (connection, peer) = await ConnectAsync();
        await using var _ = connection;
        using var __ = peer;
        var input = (SocketInputReader)connection.Transport.Input;
        var output = (SocketOutputWriter)connection.Transport.Output;
        Assert.NotNull(input.Epoll);
        Assert.Same(input.Epoll, output.Epoll);

        var reading = input.ReadAsync();
        await peer.SendAsync("ping"u8.ToArray());
        var result = await reading;
        Assert.Equal("ping"u8.ToArray(), result.Buffer.ToArray());
        input.AdvanceTo(result.Buffer.End);
        await output.WriteAsync("pong"u8.ToArray());
        var buffer = new byte[4];
        Assert.Equal(4, await peer.ReceiveAsync(buffer));
        reading = input.ReadAsync();
        await Task.Delay(20);
        Assert.False(reading.IsCompleted);

        // The runtime makes its SocketAsyncContext (and the receive's event args) with a socket's first asynchronous
        // operation, or with Blocking = false.
        var context = typeof(SafeSocketHandle).GetField("_asyncContext", BindingFlags.NonPublic | BindingFlags.Instance)!;
        Assert.Null(context.GetValue(input.Epoll.Handle));
    }

    [Fact(Timeout = 30_000)]
    public async Task An_on_demand_connection_lets_the_accepted_socket_go_and_still_reports_its_end_points_and_closes_gracefully()
    {
        if (EpollEngine.Shared is null)
        {
            // Off Linux, or with BROKER_EPOLL_TRANSPORT=0, the runtime's socket serves and is kept.
            return;
        }

        var (connection, peer) = await ConnectAsync();
        using var __ = peer;

        // Both sides go through the epoll socket: the accepted Socket (and its remote IPEndPoint) is not kept.
        Assert.False(connection.HoldsRuntimeSocket);
        Assert.Equal(peer.LocalEndPoint, connection.RemoteEndPoint);
        Assert.Equal(peer.RemoteEndPoint, connection.LocalEndPoint);

        // Collected and finalized meanwhile, the accepted socket must not have closed the descriptor.
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        var output = connection.Transport.Output;
        await output.WriteAsync("last"u8.ToArray());
        output.Complete();

        // Graceful: the bytes, then FIN (0), not a reset; the end point is still reported after the close.
        var received = new List<byte>();
        var buffer = new byte[16];
        int count;
        while ((count = await peer.ReceiveAsync(buffer)) > 0)
        {
            received.AddRange(buffer.AsSpan(0, count).ToArray());
        }

        Assert.Equal("last"u8.ToArray(), received.ToArray());
        peer.Shutdown(SocketShutdown.Send);
        await connection.DisposeAsync();
        Assert.Equal(peer.LocalEndPoint, connection.RemoteEndPoint);
    }

    [Fact(Timeout = 30_000)]
    public async Task An_abort_of_a_connection_that_let_its_socket_go_resets_it()
    {
        if (EpollEngine.Shared is null)
        {
            // Off Linux, or with BROKER_EPOLL_TRANSPORT=0, the runtime's socket serves and is kept.
            return;
        }

        var (connection, peer) = await ConnectAsync();
        using var __ = peer;
        Assert.False(connection.HoldsRuntimeSocket);
        var reading = connection.Transport.Input.ReadAsync();
        await Task.Delay(20);

        // As the runtime's close of a socket with a receive pending: RST, which the peer reads as a reset.
        connection.Abort("test");
        Assert.True((await reading).IsCompleted);
        var failure = await Assert.ThrowsAsync<SocketException>(async () =>
        {
            while (await peer.ReceiveAsync(new byte[16]) > 0)
            {
            }
        });
        Assert.Equal(SocketError.ConnectionReset, failure.SocketErrorCode);
        await connection.DisposeAsync();
    }

    [Fact(Timeout = 60_000)]
    public async Task Output_larger_than_the_kernels_buffers_waits_for_EPOLLOUT_and_arrives_whole_and_in_order()
    {
        var (connection, peer) = await ConnectAsync(new TransportSettings { MaxPendingOutputBytes = 64L * 1024 * 1024 });
        await using var _ = connection;
        using var __ = peer;
        var output = connection.Transport.Output;
        const int total = 8 * 1024 * 1024;

        // Written while the peer does not read: the kernel's buffers fill and the sends wait for EPOLLOUT.
        var writing = Task.Run(async () =>
        {
            for (var offset = 0; offset < total; offset += 10_000)
            {
                var length = Math.Min(10_000, total - offset);
                var span = output.GetSpan(length);
                for (var i = 0; i < length; i++)
                {
                    span[i] = (byte)((offset + i) % 251);
                }

                output.Advance(length);
                await output.FlushAsync();
            }
        });

        // Once the writer has filled the kernel's buffers the rest waits in ours (polled: the writer may not have run yet
        // on a loaded machine).
        await WaitUntilAsync(() => connection.PendingOutputBytes > 0);

        var buffer = new byte[64 * 1024];
        var got = 0;
        while (got < total)
        {
            var n = await peer.ReceiveAsync(buffer);
            Assert.NotEqual(0, n);
            for (var i = 0; i < n; i++)
            {
                if (buffer[i] != (byte)((got + i) % 251))
                {
                    Assert.Fail($"byte {got + i} out of order");
                }
            }

            got += n;
            if (got < total / 2)
            {
                // Slowly at first: the writer meets a full buffer again and again.
                await Task.Delay(1);
            }
        }

        await writing;
        Assert.Equal(total, got);
    }

    [Fact(Timeout = 30_000)]
    public async Task The_write_deadline_aborts_a_send_that_waits_for_EPOLLOUT()
    {
        var settings = new TransportSettings { MaxPendingOutputBytes = 64L * 1024 * 1024, WriteDeadline = TimeSpan.FromMilliseconds(200) };
        var (connection, peer) = await ConnectAsync(settings);
        using var __ = peer;
        var output = (SocketOutputWriter)connection.Transport.Output;
        var chunk = new byte[256 * 1024];
        for (var i = 0; i < 40; i++)
        {
            await output.WriteAsync(chunk);
        }

        // The send has been waiting since the kernel's buffers filled (the listener's sweep does this periodically).
        await WaitUntilAsync(() => connection.SendStartedAt != 0);
        connection.CheckWriteDeadline(Environment.TickCount64 + 1_000, (long)settings.WriteDeadline.TotalMilliseconds);

        await output.WhenEnded();
        Assert.Equal(SocketConnection.WriteDeadlineReason, connection.CloseReason);
        await connection.DisposeAsync();
    }

    [Fact(Timeout = 30_000)]
    public async Task An_abort_ends_a_read_waiting_for_input()
    {
        var (connection, peer) = await ConnectAsync();
        using var __ = peer;
        var input = connection.Transport.Input;
        var reading = input.ReadAsync();
        await Task.Delay(20);
        Assert.False(reading.IsCompleted);

        connection.Abort("test");
        var result = await reading;
        Assert.True(result.IsCompleted);
        await connection.DisposeAsync();
    }

    [Fact(Timeout = 60_000)]
    public async Task Many_connections_at_once_each_get_their_own_input()
    {
        var pairs = new List<(SocketConnection Connection, Socket Peer)>();
        try
        {
            for (var i = 0; i < 50; i++)
            {
                pairs.Add(await ConnectAsync());
            }

            var reads = pairs.Select(pair => pair.Connection.Transport.Input.ReadAsync().AsTask()).ToArray();
            for (var i = pairs.Count - 1; i >= 0; i--)
            {
                await pairs[i].Peer.SendAsync(BitConverter.GetBytes(i));
            }

            for (var i = 0; i < pairs.Count; i++)
            {
                var result = await reads[i];
                Assert.Equal(i, BitConverter.ToInt32(result.Buffer.ToArray()));
                pairs[i].Connection.Transport.Input.AdvanceTo(result.Buffer.End);
            }
        }
        finally
        {
            foreach (var (connection, peer) in pairs)
            {
                connection.Transport.Input.Complete();
                peer.Dispose();
            }

            await Task.WhenAll(pairs.Select(pair => pair.Connection.DisposeAsync().AsTask()));
        }
    }

    private static async Task<(SocketConnection Connection, Socket Peer)> ConnectAsync(TransportSettings? settings = null)
    {
        var (connection, peer) = await TransportSocketPair.ConnectAsync(settings);
        Assert.True(((IOnDemandTransport)connection.Transport).UseOnDemandInput());
        Assert.True(((IOnDemandTransport)connection.Transport).UseOnDemandOutput());
        return (connection, peer);
    }

    private static async Task WaitUntilAsync(Func<bool> condition)
    {
        for (var i = 0; i < 500 && !condition(); i++)
        {
            await Task.Delay(10);
        }

        Assert.True(condition());
    }
}
