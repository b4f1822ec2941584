using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using System.Text;
using Broker.Abstractions;
using Broker.Core.Internal.Transport;

namespace Broker.Core.Tests.Transport;

/// <summary>
/// A TCP connection whose output is sent on demand (<see cref="IOnDemandTransport"/>, issue 25): once everything is
/// sent it holds no pipe; output flows across idle periods; what waits for a peer that does not read is counted as
/// pending and stalls the flush from three quarters of max_pending; completing sends what is left, then closes, with or
/// without a write since the last send; an abort ends it.
/// </summary>
public sealed class SocketOutputWriterTests
{
    [Fact(Timeout = 30_000)]
    public async Task Output_flows_across_idle_periods_and_an_idle_connection_holds_no_pipe()
    {
        var (connection, peer) = await ConnectAsync();
        await using var _ = connection;
        using var __ = peer;
        var output = (SocketOutputWriter)connection.Transport.Output;

        for (var round = 0; round < 3; round++)
        {
            var text = "pong " + round;
            await output.WriteAsync(Encoding.ASCII.GetBytes(text));
            Assert.Equal(text, await ReceiveAsync(peer, text.Length));
            await WaitUntilAsync(() => !output.HoldsPipe);
            Assert.Equal(0, connection.PendingOutputBytes);
            await Task.Delay(30);
        }
    }

    [Fact(Timeout = 30_000)]
    public async Task Output_a_peer_does_not_read_is_pending_and_stalls_the_flush_until_it_reads()
    {
        var settings = new TransportSettings { MaxPendingOutputBytes = 4 * 1024 * 1024 };
        var (connection, peer) = await ConnectAsync(settings);
        await using var _ = connection;
        using var __ = peer;
        var output = connection.Transport.Output;
        var chunk = new byte[64 * 1024];

        // The kernel's buffers take some; then the pipe holds the rest until three quarters of max_pending.
        ValueTask<FlushResult> flush = default;
        var total = 0L;
        for (var i = 0; i < 200; i++)
        {
            chunk.CopyTo(output.GetMemory(chunk.Length));
            output.Advance(chunk.Length);
            total += chunk.Length;
            flush = output.FlushAsync();
            if (!flush.IsCompleted)
            {
                break;
            }
        }

        Assert.False(flush.IsCompleted);
        Assert.True(connection.PendingOutputBytes > 0);

        var buffer = new byte[256 * 1024];
        var got = 0L;
        while (got < total)
        {
            got += await peer.ReceiveAsync(buffer);
        }

        await flush;
        Assert.Equal(total, got);
        await WaitUntilAsync(() => connection.PendingOutputBytes == 0);
    }

    [Fact(Timeout = 30_000)]
    public async Task Completing_sends_what_is_left_then_closes()
    {
        var (connection, peer) = await ConnectAsync();
        using var _ = peer;

        await connection.Transport.Output.WriteAsync("last words"u8.ToArray());
        var disposing = connection.DisposeAsync().AsTask();

        Assert.Equal("last words", await ReceiveAsync(peer, "last words".Length));
        Assert.Equal(0, await peer.ReceiveAsync(new byte[16]));
        peer.Close();
        await disposing;
        Assert.True(connection.ConnectionClosed.IsCancellationRequested);
    }

    [Fact(Timeout = 30_000)]
    public async Task Completing_an_idle_output_closes_gracefully()
    {
        var (connection, peer) = await ConnectAsync();
        using var _ = peer;
        var output = (SocketOutputWriter)connection.Transport.Output;
        await output.WriteAsync("hello"u8.ToArray());
        Assert.Equal("hello", await ReceiveAsync(peer, 5));
        await WaitUntilAsync(() => !output.HoldsPipe);

        var disposing = connection.DisposeAsync().AsTask();
        Assert.Equal(0, await peer.ReceiveAsync(new byte[16]));
        peer.Close();
        await disposing;
    }

    [Fact(Timeout = 30_000)]
    public async Task An_abort_ends_the_output_and_later_writes_are_dropped()
    {
        var (connection, peer) = await ConnectAsync();
        using var _ = peer;
        var output = connection.Transport.Output;

        connection.Abort("test");
        await output.WriteAsync("dropped"u8.ToArray());
        await connection.DisposeAsync();
        Assert.Equal("test", connection.CloseReason);
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

    private static async Task<string> ReceiveAsync(Socket peer, int length)
    {
        var buffer = new byte[length];
        var got = 0;
        while (got < length)
        {
            var n = await peer.ReceiveAsync(buffer.AsMemory(got));
            if (n == 0)
            {
                break;
            }

            got += n;
        }

        return Encoding.ASCII.GetString(buffer, 0, got);
    }
}
