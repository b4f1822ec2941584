using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Broker.Mqtt.Tests;

/// <summary>MQTT at the byte level: hand-made packets, the packets the broker answers, and whether it closed.</summary>
public sealed class RawMqtt : IAsyncDisposable
{
    private readonly Socket socket;
    private readonly List<byte> pending = [];
    private readonly byte[] buffer = new byte[64 * 1024];

    private RawMqtt(Socket socket)
    {
        this.socket = socket;
    }

    public static async Task<RawMqtt> ConnectAsync(IPEndPoint endPoint)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        using var cts = new CancellationTokenSource(MqttBroker.Timeout);
        await socket.ConnectAsync(endPoint, cts.Token);
        return new RawMqtt(socket);
    }

    public async Task SendAsync(params byte[] data)
    {
        using var cts = new CancellationTokenSource(MqttBroker.Timeout);
        await socket.SendAsync(data, SocketFlags.None, cts.Token);
    }

    /// <summary>Reads one packet: its fixed header byte and its body. Throws when the broker closes first.</summary>
    public async Task<(byte Header, byte[] Body)> ReadPacketAsync(TimeSpan? timeout = null)
    {
        using var cts = new CancellationTokenSource(timeout ?? MqttBroker.Timeout);
        while (true)
        {
            if (TryTake(out var packet))
            {
                return packet;
            }

            var read = await socket.ReceiveAsync(buffer, SocketFlags.None, cts.Token);
            if (read == 0)
            {
                throw new IOException("the broker closed the connection; unread: " + Convert.ToHexString([.. pending]));
            }

            pending.AddRange(buffer.AsSpan(0, read));
        }
    }

    /// <summary>Whether the broker closes the connection within <paramref name="timeout"/>, discarding what it sends before.</summary>
    public async Task<bool> ClosedAsync(TimeSpan? timeout = null)
    {
        using var cts = new CancellationTokenSource(timeout ?? MqttBroker.Timeout);
        try
        {
            while (true)
            {
                var read = await socket.ReceiveAsync(buffer, SocketFlags.None, cts.Token);
                if (read == 0)
                {
                    return true;
                }

                pending.AddRange(buffer.AsSpan(0, read));
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

    /// <summary>The bytes received and not read as packets.</summary>
    public byte[] Unread => [.. pending];

    public ValueTask DisposeAsync()
    {
        socket.Dispose();
        return ValueTask.CompletedTask;
    }

    private bool TryTake(out (byte Header, byte[] Body) packet)
    {
        packet = default;
        if (pending.Count < 2)
        {
            return false;
        }

        var length = 0;
        var index = 1;
        for (var shift = 0; ; shift += 7, index++)
        {
            if (index >= pending.Count)
            {
                return false;
            }

            length |= (pending[index] & 0x7F) << shift;
            if ((pending[index] & 0x80) == 0)
            {
                break;
            }
        }

        var start = index + 1;
        if (pending.Count < start + length)
        {
            return false;
        }

        packet = (pending[0], pending.GetRange(start, length).ToArray());
        pending.RemoveRange(0, start + length);
        return true;
    }

    // Packet builders.

    public static byte[] Packet(byte header, params byte[][] parts)
    {
        var body = parts.SelectMany(p => p).ToArray();
        var result = new List<byte> { header };
        var length = body.Length;
        do
        {
            var b = (byte)(length & 0x7F);
            length >>= 7;
            if (length > 0)
            {
                b |= 0x80;
            }

            result.Add(b);
        }
        while (length > 0);
        result.AddRange(body);
        return [.. result];
    }

    public static byte[] Str(string text)
    {
        var bytes = Encoding.UTF8.GetBytes(text);
        return [(byte)(bytes.Length >> 8), (byte)bytes.Length, .. bytes];
    }

    public static byte[] U16(int value) => [(byte)(value >> 8), (byte)value];

    /// <summary>CONNECT for MQTT 3.1.1 (level 4) or 5, clean session, with no will or credentials.</summary>
    public static byte[] Connect(string clientId, byte level = 4, byte flags = 0x02, int keepAlive = 60, byte[]? properties = null)
        => Packet(0x10, Str("MQTT"), [level, flags], U16(keepAlive), level == 5 ? [.. VarInt((properties ?? []).Length), .. properties ?? []] : [], Str(clientId));

    public static byte[] VarInt(int value)
    {
        var result = new List<byte>();
        do
        {
            var b = (byte)(value & 0x7F);
            value >>= 7;
            if (value > 0)
            {
                b |= 0x80;
            }

            result.Add(b);
        }
        while (value > 0);
        return [.. result];
    }

    /// <summary>Connects at MQTT 3.1.1 or 5 and checks the CONNACK accepts.</summary>
    public static async Task<RawMqtt> ConnectedAsync(IPEndPoint endPoint, string clientId, byte level = 4, byte[]? properties = null)
    {
        var raw = await ConnectAsync(endPoint);
        await raw.SendAsync(Connect(clientId, level, properties: properties));
        var (header, body) = await raw.ReadPacketAsync();
        Assert.Equal(0x20, header);
        Assert.Equal(0, body[1]);
        return raw;
    }
}
