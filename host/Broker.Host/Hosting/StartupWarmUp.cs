using System.Net;
using System.Net.Sockets;
using Broker.Core;
using Microsoft.Extensions.Logging.Abstractions;

namespace Broker.Host.Hosting;

/// <summary>
/// Runs the NATS publish and delivery path once before the broker starts, so that a fresh server's first client does
/// not pay its one-time costs (issue 24's "first run on a fresh server"): the first call of each ReadyToRun method
/// goes through the runtime's prestub and resolves its call sites' indirection cells, types are loaded, generic code
/// left to the JIT is compiled, pools and the socket engine get their first buffers. docs/benchmarks.md, "firstrun2".
/// </summary>
/// <remarks>
/// The warm-up runs a second, private <see cref="BrokerServer"/> (loopback, port 0, no plugins, no logging) that a
/// subscriber and a publisher connect to over TCP: the same methods and generic instantiations as the real server's
/// client port, but none of its state, so no connection id, counter (<c>/varz</c> <c>in_msgs</c>,
/// <c>total_connections</c>), closed-connection entry (<c>/connz?state=closed</c>) or system event of the real
/// server shows it. It starts as soon as the command line asks for a run, beside the real server's own start (the
/// configuration, the plugins, the services, JetStream's restore), and is over (its port closed) before the real
/// listeners accept (<see cref="StartupWarmUpGate"/>). Its
/// calls fall within the runtime's call-counting delay of start-up, so they do not count towards the tier-1
/// recompilation of the publish path. A failure only skips it: the broker starts as it would without it.
/// </remarks>
internal static class StartupWarmUp
{
    /// <summary>Messages published through the private server: enough for the read loop to see full and split batches.</summary>
    internal const int Messages = 2_000;

    // Everything waits at most this long (it takes about 50-250 ms of wall time on a loaded 2-core machine); a warm-up
    // that cannot finish by then is abandoned rather than delay the start further.
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(2);

    private static readonly byte[] Subject = "_WARMUP.p"u8.ToArray();

    /// <summary>Runs the warm-up.</summary>
    /// <returns><see langword="null"/> when it ran, or why it did not finish.</returns>
    public static async Task<string?> RunAsync()
    {
        using var timeout = new CancellationTokenSource(Timeout);
        try
        {
            var options = new BrokerOptions { Host = IPAddress.Loopback.ToString(), Port = 0, NoSystemAccount = true };
            await using var server = new BrokerServer(options, NullLoggerFactory.Instance);
            await server.StartAsync(timeout.Token).ConfigureAwait(false);
            using var subscriber = await ConnectAsync(server.ClientEndPoint, timeout.Token).ConfigureAwait(false);
            using var publisher = await ConnectAsync(server.ClientEndPoint, timeout.Token).ConfigureAwait(false);
            await RoundTripAsync(subscriber, [.. "SUB "u8, .. Subject, .. " 1\r\n"u8], timeout.Token).ConfigureAwait(false);

            await RoundTripAsync(publisher, Publishes(), timeout.Token).ConfigureAwait(false);

            // The subscriber's PONG follows every message the server delivered to it before.
            var received = await RoundTripAsync(subscriber, [], timeout.Token).ConfigureAwait(false);
            return received >= Messages * MessageLength ? null : $"the subscriber received {received} bytes of {Messages * MessageLength}";
        }
#pragma warning disable CA1031 // Whatever stops the warm-up (no loopback interface, a timeout) only skips it; the start goes on.
        catch (Exception ex)
#pragma warning restore CA1031
        {
            return ex.Message;
        }
    }

    // "MSG _WARMUP.p 1 16\r\n", 16 bytes, "\r\n".
    private static int MessageLength => 4 + Subject.Length + 6 + 16 + 2;

    private static async Task<Socket> ConnectAsync(IPEndPoint endPoint, CancellationToken cancellationToken)
    {
        var socket = new Socket(endPoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        try
        {
            await socket.ConnectAsync(endPoint, cancellationToken).ConfigureAwait(false);
            await socket.SendAsync("CONNECT {\"verbose\":false,\"pedantic\":false}\r\n"u8.ToArray(), cancellationToken).ConfigureAwait(false);
            return socket;
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    // The PUBs of 16 B each, in one buffer that the server reads in several batches (one op split across two reads).
    private static byte[] Publishes()
    {
        byte[] one = [.. "PUB "u8, .. Subject, .. " 16\r\n0123456789abcdef\r\n"u8];
        var all = new byte[one.Length * Messages];
        for (var i = 0; i < Messages; i++)
        {
            one.CopyTo(all, i * one.Length);
        }

        return all;
    }

    // Sends the bytes and a PING, reads until the PONG; returns how many bytes came before it (after the INFO, which
    // the first read of a connection starts with).
    private static async Task<int> RoundTripAsync(Socket socket, byte[] bytes, CancellationToken cancellationToken)
    {
        if (bytes.Length > 0)
        {
            await socket.SendAsync(bytes, cancellationToken).ConfigureAwait(false);
        }

        await socket.SendAsync("PING\r\n"u8.ToArray(), cancellationToken).ConfigureAwait(false);
        var pong = "PONG\r\n"u8.ToArray();
        var buffer = new byte[16 * 1024];
        var last = new List<byte>(pong.Length);
        var total = 0;
        while (true)
        {
            var read = await socket.ReceiveAsync(buffer, cancellationToken).ConfigureAwait(false);
            if (read == 0)
            {
                throw new IOException("the warm-up server closed the connection");
            }

            total += read;

            // The PONG ends what the server sent; it may arrive split across two reads.
            for (var i = Math.Max(0, read - pong.Length); i < read; i++)
            {
                if (last.Count == pong.Length)
                {
                    last.RemoveAt(0);
                }

                last.Add(buffer[i]);
            }

            if (last.Count == pong.Length && last.SequenceEqual(pong))
            {
                return total - pong.Length;
            }
        }
    }
}
