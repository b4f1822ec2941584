using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using System.Text;
using Broker.Abstractions;
using Broker.Core.Internal.Transport;

namespace Broker.Core.Tests.Transport;

/// <summary>
/// A TCP connection whose input is read on demand (<see cref="IOnDemandTransport"/>, issue 25): idle, it holds no receive
/// array; input flows across idle periods and in pieces; a packet larger than the first array is read whole; a
/// cancelled read returns at once and input keeps flowing; a reset ends the input; and input the application no longer
/// reads is drained, so our last bytes reach the peer before the close.
/// </summary>
public sealed class SocketInputReaderTests
{
    [Fact(Timeout = 30_000)]
    public async Task An_idle_connection_holds_no_receive_array_and_input_flows_across_idle_periods()
    {
        var (connection, peer) = await ConnectAsync();
        await using var _ = connection;
        using var __ = peer;
        var input = (SocketInputReader)connection.Transport.Input;

        for (var round = 0; round < 3; round++)
        {
            var reading = input.ReadAsync();
            await Task.Delay(50);
            Assert.False(reading.IsCompleted);
            Assert.False(input.HoldsBuffer);

            var text = "ping " + round;
            await peer.SendAsync(Encoding.ASCII.GetBytes(text));
            var result = await reading;
            Assert.Equal(text, Encoding.ASCII.GetString(result.Buffer.ToArray()));
            input.AdvanceTo(result.Buffer.End);
            Assert.False(input.HoldsBuffer);
        }
    }

    [Fact(Timeout = 30_000)]
    public async Task A_parked_read_wakes_its_callback_with_the_input_and_with_a_cancellation()
    {
        var (connection, peer) = await ConnectAsync();
        await using var owned = connection;
        using var peerOwned = peer;
        var input = connection.Transport.Input;
        var parking = Assert.IsAssignableFrom<IParkingReader>(input);
        var woken = new SemaphoreSlim(0);
        Action<object?> wake = static state => ((SemaphoreSlim)state!).Release();

        Assert.False(parking.TryReadOrPark(out _, wake, woken));
        await peer.SendAsync("parked"u8.ToArray());
        Assert.True(await woken.WaitAsync(10_000));
        var result = parking.TakeParkedResult();
        Assert.Equal("parked", Encoding.ASCII.GetString(result.Buffer.ToArray()));
        Assert.False(result.IsCanceled);
        input.AdvanceTo(result.Buffer.End);

        // Parked again: CancelPendingRead wakes it as it wakes a pending ReadAsync; the next read parks once more.
        Assert.False(parking.TryReadOrPark(out _, wake, woken));
        Assert.Equal(0, woken.CurrentCount);
        input.CancelPendingRead();
        Assert.True(await woken.WaitAsync(10_000));
        Assert.True(parking.TakeParkedResult().IsCanceled);
        Assert.False(parking.TryReadOrPark(out _, wake, woken));

        // Bytes already there are returned at once, without the callback.
        await peer.SendAsync("now"u8.ToArray());
        Assert.True(await woken.WaitAsync(10_000));
        result = parking.TakeParkedResult();
        input.AdvanceTo(result.Buffer.Start, result.Buffer.End);
        await peer.SendAsync("!"u8.ToArray());
        await Task.Delay(100);
        Assert.True(parking.TryReadOrPark(out result, wake, woken));
        Assert.Equal(0, woken.CurrentCount);
        Assert.StartsWith("now", Encoding.ASCII.GetString(result.Buffer.ToArray()), StringComparison.Ordinal);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_message_larger_than_the_first_array_sent_in_pieces_is_read_whole()
    {
        var (connection, peer) = await ConnectAsync();
        await using var _ = connection;
        using var __ = peer;
        var input = connection.Transport.Input;
        var message = new byte[100_000];
        new Random(7).NextBytes(message);

        var sending = Task.Run(async () =>
        {
            for (var offset = 0; offset < message.Length; offset += 7_000)
            {
                await peer.SendAsync(message.AsMemory(offset, Math.Min(7_000, message.Length - offset)));
                await Task.Delay(5);
            }
        });

        while (true)
        {
            // Nothing consumed until all of it is there: the reader has to keep the bytes and grow.
            var result = await input.ReadAsync();
            if (result.Buffer.Length >= message.Length)
            {
                Assert.True(result.Buffer.ToArray().AsSpan().SequenceEqual(message));
                input.AdvanceTo(result.Buffer.End);
                break;
            }

            Assert.False(result.IsCompleted);
            input.AdvanceTo(result.Buffer.Start, result.Buffer.End);
        }

        await sending;
    }

    [Fact(Timeout = 30_000)]
    public async Task A_cancelled_read_returns_at_once_and_input_keeps_flowing()
    {
        var (connection, peer) = await ConnectAsync();
        await using var _ = connection;
        using var __ = peer;
        var input = connection.Transport.Input;

        var reading = input.ReadAsync();
        await Task.Delay(50);
        input.CancelPendingRead();
        var cancelled = await reading;
        Assert.True(cancelled.IsCanceled);
        input.AdvanceTo(cancelled.Buffer.End);

        await peer.SendAsync("after"u8.ToArray());
        var result = await input.ReadAsync();
        while (result.Buffer.Length < 5)
        {
            input.AdvanceTo(result.Buffer.Start, result.Buffer.End);
            result = await input.ReadAsync();
        }

        Assert.Equal("after", Encoding.ASCII.GetString(result.Buffer.ToArray()));
        input.AdvanceTo(result.Buffer.End);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_reset_while_idle_ends_the_input()
    {
        var (connection, peer) = await ConnectAsync();
        await using var _ = connection;
        var reading = connection.Transport.Input.ReadAsync();
        await Task.Delay(50);

        peer.LingerState = new LingerOption(true, 0);
        peer.Close();

        Assert.True((await reading).IsCompleted);
    }

    [Fact(Timeout = 30_000)]
    public async Task Input_left_unread_at_the_close_is_drained_so_the_last_bytes_reach_the_peer()
    {
        var (connection, peer) = await ConnectAsync();
        using var _ = peer;

        // The peer sent what the application closes without reading: the last words and the FIN still reach it.
        // (Without the drain this passes too on Linux loopback, where the FIN goes before the close's RST: the drain
        // is the receive loop's, kept for peers that lose data to a RST.)
        await peer.SendAsync(new byte[64 * 1024]);
        await connection.Transport.Output.WriteAsync("last words"u8.ToArray());
        await connection.Transport.Input.CompleteAsync();
        var disposing = connection.DisposeAsync().AsTask();

        var buffer = new byte[10];
        var got = 0;
        while (got < buffer.Length)
        {
            var n = await peer.ReceiveAsync(buffer.AsMemory(got));
            Assert.NotEqual(0, n);
            got += n;
        }

        Assert.Equal("last words", Encoding.ASCII.GetString(buffer));
        Assert.Equal(0, await peer.ReceiveAsync(new byte[16]));
        peer.Close();
        await disposing;
    }

    [Fact(Timeout = 30_000)]
    public async Task The_input_taken_as_a_pipe_first_stays_a_pipe()
    {
        var (connection, peer) = await ConnectAsync(onDemand: false);
        await using var _ = connection;
        using var __ = peer;

        Assert.IsNotType<SocketInputReader>(connection.Transport.Input);
        Assert.False(((IOnDemandTransport)connection.Transport).UseOnDemandInput());
        Assert.IsNotType<SocketInputReader>(connection.Transport.Input);
    }

    private static async Task<(SocketConnection Connection, Socket Peer)> ConnectAsync(bool onDemand = true)
    {
        var (connection, peer) = await TransportSocketPair.ConnectAsync();
        if (onDemand)
        {
            Assert.True(((IOnDemandTransport)connection.Transport).UseOnDemandInput());
        }

        return (connection, peer);
    }
}
