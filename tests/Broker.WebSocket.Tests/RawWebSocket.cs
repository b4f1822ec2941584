using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Text;

namespace Broker.WebSocket.Tests;

/// <summary>
/// A WebSocket client built by hand on a socket, for tests that send what no library would: malformed handshakes
/// and frames. It reads the server's frames raw (they are never masked). Every wait has a deadline.
/// </summary>
public sealed class RawWebSocket : IAsyncDisposable
{
    public static readonly TimeSpan DefaultTimeout = TimeSpan.FromSeconds(5);

    private readonly Socket socket;
    private readonly MemoryStream pending = new();
    private readonly byte[] buffer = new byte[64 * 1024];
    private readonly MemoryStream text = new();

    private RawWebSocket(Socket socket)
    {
        this.socket = socket;
    }

    /// <summary>The status line and headers of the server's answer to the upgrade request.</summary>
    public string ResponseHead { get; private set; } = "";

    public int Status => int.Parse(ResponseHead.Split(' ')[1], System.Globalization.CultureInfo.InvariantCulture);

    public bool Closed { get; private set; }

    public static string NewKey() => Convert.ToBase64String(RandomNumberGenerator.GetBytes(16));

    /// <summary>A valid upgrade request with optional extra or replaced headers.</summary>
    public static string Request(string path = "/", string method = "GET", params (string Name, string? Value)[] headers)
    {
        var all = new List<(string Name, string? Value)>
        {
            ("Host", "127.0.0.1"),
            ("Upgrade", "websocket"),
            ("Connection", "Upgrade"),
            ("Sec-WebSocket-Key", NewKey()),
            ("Sec-WebSocket-Version", "13"),
        };
        foreach (var header in headers)
        {
            all.RemoveAll(h => h.Name.Equals(header.Name, StringComparison.OrdinalIgnoreCase));
            if (header.Value is not null)
            {
                all.Add(header);
            }
        }

        return $"{method} {path} HTTP/1.1\r\n" + string.Concat(all.Select(h => $"{h.Name}: {h.Value}\r\n")) + "\r\n";
    }

    /// <summary>Sends <paramref name="request"/> and reads the response head (101 leaves the socket upgraded).</summary>
    public static async Task<RawWebSocket> ConnectAsync(int port, string? request = null)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        using (var cts = new CancellationTokenSource(DefaultTimeout))
        {
            await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port), cts.Token);
        }

        var client = new RawWebSocket(socket);
        await client.SendRawAsync(Encoding.Latin1.GetBytes(request ?? Request()));
        client.ResponseHead = await client.ReadHeadAsync();
        return client;
    }

    public async Task SendRawAsync(byte[] data)
    {
        using var cts = new CancellationTokenSource(DefaultTimeout);
        await socket.SendAsync(data, SocketFlags.None, cts.Token);
    }

    /// <summary>A frame as a client sends it (masked unless told otherwise).</summary>
    public static byte[] Frame(byte opcode, byte[] payload, bool final = true, bool masked = true, byte reserved = 0)
    {
        using var frame = new MemoryStream();
        frame.WriteByte((byte)((final ? 0x80 : 0) | reserved | opcode));
        var maskBit = masked ? 0x80 : 0;
        if (payload.Length < 126)
        {
            frame.WriteByte((byte)(maskBit | payload.Length));
        }
        else if (payload.Length <= ushort.MaxValue)
        {
            frame.WriteByte((byte)(maskBit | 126));
            var length = new byte[2];
            BinaryPrimitives.WriteUInt16BigEndian(length, (ushort)payload.Length);
            frame.Write(length);
        }
        else
        {
            frame.WriteByte((byte)(maskBit | 127));
            var length = new byte[8];
            BinaryPrimitives.WriteUInt64BigEndian(length, (ulong)payload.Length);
            frame.Write(length);
        }

        var data = (byte[])payload.Clone();
        if (masked)
        {
            var key = RandomNumberGenerator.GetBytes(4);
            frame.Write(key);
            for (var i = 0; i < data.Length; i++)
            {
                data[i] ^= key[i & 3];
            }
        }

        frame.Write(data);
        return frame.ToArray();
    }

    public Task SendFrameAsync(byte opcode, string payload, bool final = true, bool masked = true, byte reserved = 0)
        => SendRawAsync(Frame(opcode, Encoding.UTF8.GetBytes(payload), final, masked, reserved));

    /// <summary>Reads one frame from the server, or <see langword="null"/> when the socket closed.</summary>
    public async Task<(bool Final, byte Opcode, byte[] Payload)?> ReadFrameAsync(TimeSpan? timeout = null)
    {
        using var cts = new CancellationTokenSource(timeout ?? DefaultTimeout);
        if (!await FillAsync(2, cts.Token))
        {
            return null;
        }

        var head = Peek(2);
        var headerLength = 2;
        long length = head[1] & 0x7F;
        if (length == 126)
        {
            headerLength = 4;
        }
        else if (length == 127)
        {
            headerLength = 10;
        }

        if (!await FillAsync(headerLength, cts.Token))
        {
            return null;
        }

        var header = Peek(headerLength);
        length = headerLength == 4 ? BinaryPrimitives.ReadUInt16BigEndian(header.AsSpan(2)) : headerLength == 10 ? (long)BinaryPrimitives.ReadUInt64BigEndian(header.AsSpan(2)) : length;
        if (!await FillAsync(headerLength + (int)length, cts.Token))
        {
            return null;
        }

        var frame = Take(headerLength + (int)length);
        return ((frame[0] & 0x80) != 0, (byte)(frame[0] & 0x0F), frame[headerLength..]);
    }

    /// <summary>Reads a NATS line carried in data frames, skipping control frames.</summary>
    public async Task<string> ReadLineAsync(TimeSpan? timeout = null)
    {
        while (true)
        {
            var data = text.GetBuffer().AsSpan(0, (int)text.Length);
            var index = data.IndexOf("\r\n"u8);
            if (index >= 0)
            {
                var line = Encoding.UTF8.GetString(data[..index]);
                var rest = data[(index + 2)..].ToArray();
                text.SetLength(0);
                text.Write(rest);
                return line;
            }

            var frame = await ReadFrameAsync(timeout) ?? throw new IOException("closed");
            if (frame.Opcode is 1 or 2 or 0)
            {
                text.Write(frame.Payload);
            }
        }
    }

    /// <summary>Reads frames until the close frame; returns its status and reason, and whether the socket then closed.</summary>
    public async Task<(int Status, string Reason, bool SocketClosed)> ExpectCloseAsync(TimeSpan? timeout = null)
    {
        while (true)
        {
            var frame = await ReadFrameAsync(timeout) ?? throw new IOException("closed without a close frame");
            if (frame.Opcode != 8)
            {
                continue;
            }

            var status = frame.Payload.Length >= 2 ? BinaryPrimitives.ReadUInt16BigEndian(frame.Payload) : 1005;
            var reason = frame.Payload.Length > 2 ? Encoding.UTF8.GetString(frame.Payload, 2, frame.Payload.Length - 2) : "";
            var after = await ReadFrameAsync(timeout);
            return (status, reason, after is null && Closed);
        }
    }

    public ValueTask DisposeAsync()
    {
        socket.Dispose();
        pending.Dispose();
        text.Dispose();
        return ValueTask.CompletedTask;
    }

    private async Task<string> ReadHeadAsync()
    {
        using var cts = new CancellationTokenSource(DefaultTimeout);
        while (true)
        {
            var data = pending.GetBuffer().AsSpan(0, (int)pending.Length);
            var index = data.IndexOf("\r\n\r\n"u8);
            if (index >= 0)
            {
                return Encoding.Latin1.GetString(Take(index + 4)).TrimEnd();
            }

            if (!await ReceiveAsync(cts.Token))
            {
                return Encoding.Latin1.GetString(Take((int)pending.Length));
            }
        }
    }

    private async Task<bool> FillAsync(int count, CancellationToken cancellationToken)
    {
        while (pending.Length < count)
        {
            if (!await ReceiveAsync(cancellationToken))
            {
                return false;
            }
        }

        return true;
    }

    private async Task<bool> ReceiveAsync(CancellationToken cancellationToken)
    {
        try
        {
            var read = await socket.ReceiveAsync(buffer, SocketFlags.None, cancellationToken);
            if (read == 0)
            {
                Closed = true;
                return false;
            }

            pending.Write(buffer, 0, read);
            return true;
        }
        catch (SocketException)
        {
            Closed = true;
            return false;
        }
    }

    private byte[] Peek(int count) => pending.GetBuffer()[..count];

    private byte[] Take(int count)
    {
        var all = pending.ToArray();
        pending.SetLength(0);
        pending.Write(all, count, all.Length - count);
        return all[..count];
    }
}
