using System.Net;
using System.Net.Sockets;
using System.Text;
using Xunit.Abstractions;

namespace Broker.Security.Tests;

/// <summary>
/// Input that never ends: a NATS control line without CRLF and MQTT packets whose length never comes or never arrives.
/// The server must close the client early instead of buffering what it sends.
/// </summary>
public sealed class OversizedInputTests(ITestOutputHelper output)
{
    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    [Theory(Timeout = 60_000)]
    [InlineData(ServerKind.Ours, true, false)]
    [InlineData(ServerKind.Ours, false, false)]
    [InlineData(ServerKind.Ours, false, true)]
    [InlineData(ServerKind.Reference, true, false)]
    [InlineData(ServerKind.Reference, false, false)]
    [InlineData(ServerKind.Reference, false, true)]
    public async Task A_control_line_without_end_is_closed_after_max_control_line(ServerKind kind, bool afterConnect, bool authRequired)
    {
        await using var server = authRequired
            ? await ServerUnderTest.StartAsync(kind, o => o.Authorization.Token = "t", "authorization { token: t }")
            : await ServerUnderTest.StartAsync(kind);
        await using var client = await server.ConnectAsync();
        if (afterConnect)
        {
            await client.SendAsync("CONNECT {\"verbose\":false}\r\n");
        }

        // 4 KB at a time, waiting a moment for an answer, up to 8 MB: the server must answer within the first
        // max_control_line (4096) plus what one read of its buffer brings, not after buffering megabytes.
        var chunk = Encoding.ASCII.GetBytes("PUB " + new string('a', 4092));
        long sent = 0;
        string? error = null;
        while (sent < 8 * 1024 * 1024 && error is null && !client.Closed)
        {
            try
            {
                await client.SendAsync(chunk);
            }
            catch (SocketException)
            {
                break;
            }

            sent += chunk.Length;
            error = await client.TryReadLineAsync(TimeSpan.FromMilliseconds(20));
        }

        error ??= await client.TryReadLineAsync(TimeSpan.FromSeconds(2));
        output.WriteLine($"{kind}: answered after {sent} bytes");

        // Before CONNECT on a server that requires authentication nats-server answers as to any bad first line.
        Assert.Equal(authRequired ? "-ERR 'Authorization Violation'" : "-ERR 'maximum control line exceeded'", error);
        Assert.True(sent <= 256 * 1024, $"{sent} bytes sent before the server answered");
        Assert.Empty(await client.ExpectClosedAsync());
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task An_mqtt_connect_announcing_the_largest_length_is_not_buffered(ServerKind kind)
    {
        await using var server = await MqttSecurityServer.StartAsync(kind, [SecurityUsers.Admin]);
        using var socket = await ConnectMqttAsync(server);

        // CONNECT with remaining length 268435455 (the most MQTT can say), then its body, 16 KB at a time.
        await socket.SendAsync(new byte[] { 0x10, 0xFF, 0xFF, 0xFF, 0x7F });
        var (sent, closed) = await FeedUntilClosedAsync(socket, 16 * 1024, 4 * 1024 * 1024);
        output.WriteLine($"{kind}: {(closed ? "closed" : "still open")} after {sent} bytes");
        Assert.True(closed, $"{kind} kept reading a 256 MB CONNECT ({sent} bytes sent)");
        if (kind == ServerKind.Ours)
        {
            Assert.True(sent <= 256 * 1024, $"{sent} bytes sent before the close");
        }
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task A_remaining_length_of_five_bytes_closes_at_once(ServerKind kind)
    {
        await using var server = await MqttSecurityServer.StartAsync(kind, [SecurityUsers.Admin]);
        using var socket = await ConnectMqttAsync(server);
        await socket.SendAsync(new byte[] { 0x10, 0xFF, 0xFF, 0xFF, 0xFF, 0x01 });
        var (_, closed) = await FeedUntilClosedAsync(socket, 1, 0);
        Assert.True(closed);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task A_packet_that_never_completes_is_closed_by_the_keep_alive(ServerKind kind)
    {
        await using var server = await MqttSecurityServer.StartAsync(kind, [SecurityUsers.Admin]);
        using var socket = await ConnectMqttAsync(server);
        var user = Encoding.ASCII.GetBytes("admin");
        byte[] body = [0, 4, (byte)'M', (byte)'Q', (byte)'T', (byte)'T', 4, 0xC2, 0, 1, 0, 1, (byte)'k', 0, 5, .. user, 0, 5, .. user];
        await socket.SendAsync((byte[])[0x10, (byte)body.Length, .. body]);
        var connack = new byte[4];
        Assert.Equal(4, await socket.ReceiveAsync(connack));
        Assert.Equal(new byte[] { 0x20, 2, 0, 0 }, connack);

        // A PUBLISH announcing 1000 bytes, of which 10 come; then nothing. Keep-alive is 1 s.
        var started = System.Diagnostics.Stopwatch.StartNew();
        await socket.SendAsync(new byte[] { 0x30, 0xE8, 0x07, 0, 3, (byte)'a', (byte)'/', (byte)'b', 1, 2, 3, 4, 5 });
        var (_, closed) = await FeedUntilClosedAsync(socket, 0, 0, TimeSpan.FromSeconds(10));
        output.WriteLine($"{kind}: closed after {started.Elapsed.TotalSeconds:F1} s");
        Assert.True(closed);
        Assert.InRange(started.Elapsed, TimeSpan.FromSeconds(0.9), TimeSpan.FromSeconds(5));
    }

    private static async Task<Socket> ConnectMqttAsync(MqttSecurityServer server)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, server.MqttPort));
        return socket;
    }

    /// <summary>
    /// Sends <paramref name="chunk"/> bytes at a time (up to <paramref name="limit"/>), checking between sends whether
    /// the server closed; then waits up to <paramref name="wait"/> (default 2 s) for the close. Returns what was sent.
    /// </summary>
    private static async Task<(long Sent, bool Closed)> FeedUntilClosedAsync(Socket socket, int chunk, long limit, TimeSpan? wait = null)
    {
        var data = new byte[Math.Max(chunk, 1)];
        var scratch = new byte[1024];
        long sent = 0;
        while (sent < limit)
        {
            try
            {
                sent += await socket.SendAsync(data.AsMemory(0, chunk));
            }
            catch (SocketException)
            {
                return (sent, true);
            }

            if (await ClosedWithinAsync(socket, scratch, TimeSpan.FromMilliseconds(10)))
            {
                return (sent, true);
            }
        }

        return (sent, await ClosedWithinAsync(socket, scratch, wait ?? TimeSpan.FromSeconds(2)));
    }

    private static async Task<bool> ClosedWithinAsync(Socket socket, byte[] scratch, TimeSpan timeout)
    {
        using var cts = new CancellationTokenSource(timeout);
        try
        {
            while (true)
            {
                if (await socket.ReceiveAsync(scratch, SocketFlags.None, cts.Token) == 0)
                {
                    return true;
                }
            }
        }
        catch (OperationCanceledException)
        {
            return false;
        }
        catch (SocketException)
        {
            return true;
        }
    }
}
