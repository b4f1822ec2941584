using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Broker.TestKit;

/// <summary>
/// A NATS connection at the byte level, for tests where the exact wire bytes matter: send raw protocol text, read
/// lines with a deadline, observe whether the server closed the socket.
/// </summary>
public sealed class RawClient : IAsyncDisposable
{
    public static readonly TimeSpan DefaultTimeout = TimeSpan.FromSeconds(5);

    private readonly Socket socket;
    private readonly byte[] buffer = new byte[64 * 1024];
    private readonly ReceivedBytes pending = new();

    private RawClient(Socket socket)
    {
        this.socket = socket;
    }

    /// <summary>The INFO line the server sent first (without CRLF), or null when not read.</summary>
    public string? Info { get; private set; }

    public bool Closed { get; private set; }

    /// <summary>The client's own port (the server names the connection by it).</summary>
    public int LocalPort => ((IPEndPoint)socket.LocalEndPoint!).Port;

    public static async Task<RawClient> ConnectAsync(EndPoint endPoint, bool readInfo = true)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        using var cts = new CancellationTokenSource(DefaultTimeout);
        await socket.ConnectAsync(endPoint, cts.Token).ConfigureAwait(false);
        var client = new RawClient(socket);
        if (readInfo)
        {
            client.Info = await client.ReadLineAsync().ConfigureAwait(false);
            if (!client.Info.StartsWith("INFO ", StringComparison.Ordinal))
            {
                throw new InvalidOperationException("Expected INFO first, got: " + client.Info);
            }
        }

        return client;
    }

    public static Task<RawClient> ConnectAsync(int port, bool readInfo = true) => ConnectAsync(new IPEndPoint(IPAddress.Loopback, port), readInfo);

    public Task SendAsync(string text) => SendAsync(Encoding.Latin1.GetBytes(text));

    public async Task SendAsync(byte[] data)
    {
        using var cts = new CancellationTokenSource(DefaultTimeout);
        await socket.SendAsync(data, SocketFlags.None, cts.Token).ConfigureAwait(false);
    }

    /// <summary>Reads one line (without CRLF); throws on timeout or when the socket closes first.</summary>
    public async Task<string> ReadLineAsync(TimeSpan? timeout = null)
    {
        return await TryReadLineAsync(timeout ?? DefaultTimeout).ConfigureAwait(false)
            ?? throw new IOException(Closed ? "The server closed the connection." : "Timed out waiting for a line.");
    }

    /// <summary>Reads one line, or null when the socket closed or nothing arrived in time.</summary>
    public async Task<string?> TryReadLineAsync(TimeSpan timeout)
    {
        using var cts = new CancellationTokenSource(timeout);
        while (true)
        {
            var line = pending.TakeLine();
            if (line is not null)
            {
                return line;
            }

            if (Closed || !await FillAsync(cts.Token).ConfigureAwait(false))
            {
                return null;
            }
        }
    }

    /// <summary>
    /// Waits <paramref name="quiet"/> for anything but the server's keep-alive: returns the first other line, or null
    /// when nothing else arrived. A server PING (the first comes about 2 s after CONNECT, sooner than a loaded machine
    /// may get here) is answered and skipped, so "nothing arrived" means nothing the test is about.
    /// </summary>
    public async Task<string?> ReadOtherThanPingAsync(TimeSpan quiet)
    {
        var deadline = DateTime.UtcNow + quiet;
        while (true)
        {
            var left = deadline - DateTime.UtcNow;
            var line = left > TimeSpan.Zero ? await TryReadLineAsync(left).ConfigureAwait(false) : null;
            if (line != "PING")
            {
                return line;
            }

            await SendAsync("PONG\r\n").ConfigureAwait(false);
        }
    }

    /// <summary>Reads exactly <paramref name="count"/> bytes.</summary>
    public async Task<byte[]> ReadBytesAsync(int count, TimeSpan? timeout = null)
    {
        using var cts = new CancellationTokenSource(timeout ?? DefaultTimeout);
        while (pending.Length < count)
        {
            if (Closed || !await FillAsync(cts.Token).ConfigureAwait(false))
            {
                throw new IOException("Connection closed or timed out before enough bytes arrived.");
            }
        }

        return pending.Take(count);
    }

    /// <summary>
    /// Reads and discards <paramref name="total"/> bytes in chunks of at most <paramref name="chunk"/>, pausing after
    /// each: a subscriber slower than its publisher. Returns the bytes read (less than asked when the socket closed).
    /// </summary>
    public async Task<long> ReadSlowlyAsync(long total, int chunk, TimeSpan pause, TimeSpan timeout)
    {
        using var cts = new CancellationTokenSource(timeout);
        long read = pending.Length;
        pending.Clear();
        var scratch = new byte[chunk];
        while (read < total)
        {
            int n;
            try
            {
                n = await socket.ReceiveAsync(scratch.AsMemory(0, (int)Math.Min(chunk, total - read)), SocketFlags.None, cts.Token).ConfigureAwait(false);
            }
            catch (Exception ex) when (ex is SocketException or OperationCanceledException)
            {
                break;
            }

            if (n == 0)
            {
                Closed = true;
                break;
            }

            read += n;
            await Task.Delay(pause, CancellationToken.None).ConfigureAwait(false);
        }

        return read;
    }

    /// <summary>Why the last <see cref="ReadSlowlyOnOwnThreadAsync"/> stopped early, when a socket error stopped it.</summary>
    public string? LastReadError { get; private set; }

    /// <summary>
    /// <see cref="ReadSlowlyAsync"/> on a thread of its own with blocking receives: a reader that the thread pool of a
    /// busy test process cannot hold up, for tests whose subject is how the server treats a reader that keeps reading.
    /// </summary>
    public Task<long> ReadSlowlyOnOwnThreadAsync(long total, int chunk, TimeSpan pause, TimeSpan timeout) =>
        Task.Factory.StartNew(
            () =>
            {
                var deadline = DateTime.UtcNow + timeout;
                long read = pending.Length;
                pending.Clear();
                var scratch = new byte[chunk];
                socket.ReceiveTimeout = (int)Math.Max(1, timeout.TotalMilliseconds);
                while (read < total && DateTime.UtcNow < deadline)
                {
                    int n;
                    try
                    {
                        n = socket.Receive(scratch, 0, (int)Math.Min(chunk, total - read), SocketFlags.None);
                    }
                    catch (SocketException ex)
                    {
                        LastReadError = ex.SocketErrorCode.ToString();
                        break;
                    }

                    if (n == 0)
                    {
                        Closed = true;
                        break;
                    }

                    read += n;
                    Thread.Sleep(pause);
                }

                return read;
            },
            CancellationToken.None,
            TaskCreationOptions.LongRunning,
            TaskScheduler.Default);

    /// <summary>Sends PING and reads every line up to the PONG, or until the server closes the socket.</summary>
    public async Task<Transcript> PingAndCollectAsync(TimeSpan? timeout = null, bool answerServerPings = true)
    {
        if (!Closed)
        {
            try
            {
                await SendAsync("PING\r\n").ConfigureAwait(false);
            }
            catch (SocketException)
            {
                // Already closed by the server; the transcript will show it.
            }
        }

        return await CollectUntilAsync("PONG", timeout, answerServerPings).ConfigureAwait(false);
    }

    /// <summary>
    /// Reads lines until one equals <paramref name="terminator"/> (included) or the socket closes. Server PINGs are
    /// answered and not listed unless <paramref name="answerServerPings"/> is false.
    /// </summary>
    public async Task<Transcript> CollectUntilAsync(string terminator, TimeSpan? timeout = null, bool answerServerPings = true)
    {
        var lines = new List<string>();
        var deadline = DateTime.UtcNow + (timeout ?? DefaultTimeout);
        while (true)
        {
            var remaining = deadline - DateTime.UtcNow;
            if (remaining <= TimeSpan.Zero)
            {
                throw new TimeoutException("Timed out; lines so far: " + string.Join(" | ", lines));
            }

            var line = await TryReadLineAsync(remaining).ConfigureAwait(false);
            if (line is null)
            {
                if (Closed)
                {
                    return new Transcript(lines, Closed: true);
                }

                continue;
            }

            // A server keep-alive PING (the first comes about 2 s after CONNECT) is answered and left out, so a slow
            // run does not change the transcript. Tests about pings read lines themselves.
            if (answerServerPings && line == "PING" && terminator != "PING")
            {
                await SendAsync("PONG\r\n").ConfigureAwait(false);
                continue;
            }

            lines.Add(line);
            if (line == terminator)
            {
                return new Transcript(lines, Closed: false);
            }
        }
    }

    /// <summary>Waits until the server closes the socket; returns the lines received meanwhile.</summary>
    public async Task<IReadOnlyList<string>> ExpectClosedAsync(TimeSpan? timeout = null)
    {
        var lines = new List<string>();
        using var cts = new CancellationTokenSource(timeout ?? DefaultTimeout);
        while (true)
        {
            var line = pending.TakeLine();
            if (line is not null)
            {
                lines.Add(line);
                continue;
            }

            if (Closed)
            {
                return lines;
            }

            if (!await FillAsync(cts.Token).ConfigureAwait(false) && !Closed)
            {
                throw new TimeoutException("The server did not close the connection; lines: " + string.Join(" | ", lines));
            }
        }
    }

    public ValueTask DisposeAsync()
    {
        socket.Dispose();
        return ValueTask.CompletedTask;
    }

    private async Task<bool> FillAsync(CancellationToken cancellationToken)
    {
        try
        {
            var read = await socket.ReceiveAsync(buffer, SocketFlags.None, cancellationToken).ConfigureAwait(false);
            if (read == 0)
            {
                Closed = true;
                return false;
            }

            pending.Append(buffer.AsSpan(0, read));
            return true;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
        catch (SocketException)
        {
            Closed = true;
            return false;
        }
    }
}

/// <summary>What a server answered: the lines after INFO, and whether it closed the connection.</summary>
public sealed record Transcript(IReadOnlyList<string> Lines, bool Closed)
{
    public override string ToString() => string.Join(" | ", Lines) + (Closed ? " [closed]" : " [open]");
}
