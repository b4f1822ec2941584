using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using System.Text;
using Broker.Abstractions;
using Broker.Core.Internal.Transport;

namespace Broker.Core.Tests.Transport;

/// <summary>
/// A TCP connection across idle periods (issue 25): data that comes after them, in either direction, flows; the
/// connection closes gracefully; a reset while idle ends the input; and its closed token, made only when asked for, is
/// cancelled however late it is asked.
/// </summary>
public sealed class SocketConnectionTests
{
    [Fact(Timeout = 30_000)]
    public async Task Data_flows_both_ways_across_idle_periods()
    {
        var (connection, peer) = await ConnectAsync();
        await using var _ = connection;
        using var __ = peer;

        for (var round = 0; round < 5; round++)
        {
            // Idle: both loops are waiting for the peer and for output.
            await Task.Delay(50);
            var text = "ping " + round;
            await peer.SendAsync(Encoding.ASCII.GetBytes(text));
            var read = await ReadAtLeastAsync(connection.Transport.Input, text.Length);
            Assert.Equal(text, read);

            await connection.Transport.Output.WriteAsync(Encoding.ASCII.GetBytes("pong " + round));
            Assert.Equal("pong " + round, await ReceiveAsync(peer, ("pong " + round).Length));
        }
    }

    [Fact(Timeout = 30_000)]
    public async Task Completing_the_output_sends_what_is_left_then_closes_and_disposing_ends()
    {
        var (connection, peer) = await ConnectAsync();
        using var _ = peer;
        await Task.Delay(50);

        await connection.Transport.Output.WriteAsync("last words"u8.ToArray());
        var disposing = connection.DisposeAsync().AsTask();

        Assert.Equal("last words", await ReceiveAsync(peer, "last words".Length));
        var buffer = new byte[16];
        Assert.Equal(0, await peer.ReceiveAsync(buffer));
        peer.Close();
        await disposing;
        Assert.True(connection.ConnectionClosed.IsCancellationRequested);
    }

    [Fact(Timeout = 30_000)]
    public async Task The_closed_token_is_cancelled_whether_asked_for_before_or_after_the_close()
    {
        var (early, earlyPeer) = await ConnectAsync();
        var token = early.ConnectionClosed;
        Assert.False(token.IsCancellationRequested);
        earlyPeer.Close();
        await early.DisposeAsync();
        Assert.True(token.IsCancellationRequested);

        var (late, latePeer) = await ConnectAsync();
        latePeer.Close();
        await late.DisposeAsync();
        Assert.True(late.ConnectionClosed.IsCancellationRequested);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_peer_that_resets_while_the_connection_is_idle_ends_its_input()
    {
        var (connection, peer) = await ConnectAsync();
        await using var _ = connection;
        await Task.Delay(50);

        peer.LingerState = new LingerOption(true, 0);
        peer.Close();

        var result = await connection.Transport.Input.ReadAsync();
        Assert.True(result.IsCompleted);
    }

    private static Task<(SocketConnection Connection, Socket Peer)> ConnectAsync() => TransportSocketPair.ConnectAsync();

    private static async Task<string> ReadAtLeastAsync(PipeReader input, int length)
    {
        while (true)
        {
            var result = await input.ReadAsync();
            if (result.Buffer.Length >= length || result.IsCompleted)
            {
                var text = Encoding.ASCII.GetString(result.Buffer.ToArray());
                input.AdvanceTo(result.Buffer.End);
                return text;
            }

            input.AdvanceTo(result.Buffer.Start, result.Buffer.End);
        }
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
