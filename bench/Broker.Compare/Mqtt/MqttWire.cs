using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Broker.Compare.Mqtt;

/// <summary>
/// The MQTT side of the load generator: raw sockets, hand-made packets (the same bytes for every server), and a
/// reader that counts PUBLISH packets and answers QoS 1 ones with PUBACK.
/// </summary>
internal sealed class MqttWire : IDisposable
{
    private readonly Lock sendLock = new();

    private readonly Socket socket;
    private readonly byte[] buffer = new byte[256 * 1024];
    private int start;
    private int end;

    private MqttWire(Socket socket)
    {
        this.socket = socket;
    }

    /// <summary>
    /// Connects and waits for a CONNACK that accepts; a <paramref name="receiveBufferSize"/> above 0 caps the
    /// kernel's receive buffer first (for subscribers that stop reading).
    /// </summary>
    public static async Task<MqttWire> ConnectAsync(IPEndPoint endPoint, string clientId, CancellationToken cancellationToken, byte level = 4, int receiveBufferSize = 0)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        if (receiveBufferSize > 0)
        {
            socket.ReceiveBufferSize = receiveBufferSize;
        }

        await socket.ConnectAsync(endPoint, cancellationToken).ConfigureAwait(false);
        var wire = new MqttWire(socket) { Level = level };
        await wire.SendAsync(Connect(clientId, level), cancellationToken).ConfigureAwait(false);
        var (header, body) = await wire.ReadPacketAsync(cancellationToken).ConfigureAwait(false);
        if (header != 0x20 || body.Length < 2 || body[1] != 0)
        {
            throw new InvalidOperationException($"CONNACK refused: {header:x2} {Convert.ToHexString(body)}");
        }

        return wire;
    }

    public Socket Socket => socket;

    /// <summary>The protocol level the connection speaks: 4 (MQTT 3.1.1) or 5 (MQTT 5).</summary>
    public byte Level { get; private init; } = 4;

    public async Task SubscribeAsync(string filter, byte qos, CancellationToken cancellationToken)
    {
        var topic = Encoding.UTF8.GetBytes(filter);
        // MQTT 5 adds an empty property block after the packet id, in SUBSCRIBE and in SUBACK.
        var properties = Level == 5 ? new byte[] { 0 } : [];
        await SendAsync(Packet(0x82, [0, 1, .. properties, (byte)(topic.Length >> 8), (byte)topic.Length, .. topic, qos]), cancellationToken).ConfigureAwait(false);
        while (true)
        {
            var (header, body) = await ReadPacketAsync(cancellationToken).ConfigureAwait(false);
            if (header != 0x90)
            {
                continue;
            }

            // A server may grant less than asked; a row measuring QoS 1 delivery must not silently measure QoS 0.
            var granted = Level == 5 ? (body.Length > 3 ? body[3 + body[2]] : 0xFF) : (body.Length > 2 ? body[2] : 0xFF);
            if (granted != qos)
            {
                throw new InvalidOperationException($"SUBACK granted 0x{granted:x2} for QoS {qos} on {filter}");
            }

            return;
        }
    }

    public async Task SendAsync(ReadOnlyMemory<byte> data, CancellationToken cancellationToken)
    {
        while (!data.IsEmpty)
        {
            var sent = await socket.SendAsync(data, SocketFlags.None, cancellationToken).ConfigureAwait(false);
            data = data[sent..];
        }
    }

    /// <summary>
    /// Reads and counts PUBLISH packets until <paramref name="until"/> returns true; acknowledges QoS 1 ones (PUBACK)
    /// and QoS 2 ones (PUBREC, then PUBCOMP for each PUBREL).
    /// </summary>
    public long CountPublishes(Func<long, bool> until, Action<long> progress)
    {
        long count = 0;
        var acks = new byte[4 * 1024];
        ReadUntil(
            () => until(count),
            () =>
            {
                var ackLength = 0;
                while (TryTake(out var header, out var bodyStart, out _))
                {
                    if (ackLength + 4 > acks.Length)
                    {
                        socket.Send(acks.AsSpan(0, ackLength));
                        ackLength = 0;
                    }

                    if (header == 0x62)
                    {
                        // PUBREL of a QoS 2 delivery: PUBCOMP.
                        acks[ackLength++] = 0x70;
                        acks[ackLength++] = 0x02;
                        acks[ackLength++] = buffer[bodyStart];
                        acks[ackLength++] = buffer[bodyStart + 1];
                        continue;
                    }

                    if ((header >> 4) != 3)
                    {
                        continue;
                    }

                    count++;
                    if ((header & 0x06) != 0)
                    {
                        // PUBACK (QoS 1) or PUBREC (QoS 2) with the packet id after the topic.
                        var id = bodyStart + 2 + ((buffer[bodyStart] << 8) | buffer[bodyStart + 1]);
                        acks[ackLength++] = (header & 0x06) == 0x02 ? (byte)0x40 : (byte)0x50;
                        acks[ackLength++] = 0x02;
                        acks[ackLength++] = buffer[id];
                        acks[ackLength++] = buffer[id + 1];
                    }
                }

                if (ackLength > 0)
                {
                    socket.Send(acks.AsSpan(0, ackLength));
                }

                progress(count);
            });
        return count;
    }

    /// <summary>A QoS 0 PUBLISH as <see cref="ReadPublishes"/> hands it over: its topic and payload.</summary>
    public delegate void PublishReceived(ReadOnlySpan<byte> topic, ReadOnlySpan<byte> payload);

    /// <summary>
    /// Hands every QoS 0 PUBLISH to <paramref name="received"/> until <paramref name="done"/> (checked between
    /// reads); other packets (PINGRESP) are skipped. For the soak's steady subscribers, which check sequence numbers.
    /// </summary>
    public void ReadPublishes(Func<bool> done, PublishReceived received)
    {
        ArgumentNullException.ThrowIfNull(received);
        ReadUntil(
            done,
            () =>
            {
                while (TryTake(out var header, out var bodyStart, out var bodyLength))
                {
                    if ((header >> 4) != 3 || (header & 0x06) != 0)
                    {
                        continue;
                    }

                    var topicLength = (buffer[bodyStart] << 8) | buffer[bodyStart + 1];
                    received(buffer.AsSpan(bodyStart + 2, topicLength), buffer.AsSpan(bodyStart + 2 + topicLength, bodyLength - 2 - topicLength));
                }
            });
    }

    /// <summary>PINGREQ, which keeps an otherwise silent session inside its keep-alive.</summary>
    public static ReadOnlySpan<byte> PingRequest => [0xC0, 0x00];

    /// <summary>DISCONNECT: the client's orderly goodbye.</summary>
    public static ReadOnlySpan<byte> Disconnect => [0xE0, 0x00];

    /// <summary>
    /// Counts PUBACKs (QoS 1) or PUBCOMPs (QoS 2, answering each PUBREC with PUBREL) until <paramref name="until"/>;
    /// for a QoS 1 or 2 publisher's window.
    /// </summary>
    public long CountAcks(Func<long, bool> until, Action<long> progress)
    {
        long count = 0;
        var releases = new byte[4 * 1024];
        ReadUntil(
            () => until(count),
            () =>
            {
                var length = 0;
                while (TryTake(out var header, out var bodyStart, out _))
                {
                    if (header is 0x40 or 0x70)
                    {
                        count++;
                    }
                    else if (header == 0x50)
                    {
                        if (length + 4 > releases.Length)
                        {
                            Send(releases.AsSpan(0, length));
                            length = 0;
                        }

                        releases[length++] = 0x62;
                        releases[length++] = 0x02;
                        releases[length++] = buffer[bodyStart];
                        releases[length++] = buffer[bodyStart + 1];
                    }
                }

                if (length > 0)
                {
                    Send(releases.AsSpan(0, length));
                }

                progress(count);
            });
        return count;
    }

    /// <summary>Runs <paramref name="take"/> on what arrived, then reads more, until <paramref name="done"/>.</summary>
    private void ReadUntil(Func<bool> done, Action take)
    {
        while (!done())
        {
            take();
            if (done())
            {
                break;
            }

            Compact();
            var read = socket.Receive(buffer, end, buffer.Length - end, SocketFlags.None);
            if (read == 0)
            {
                throw new IOException("the server closed the connection");
            }

            end += read;
        }
    }

    /// <summary>
    /// Sends on the socket, one sender at a time: a QoS 2 publisher's batches and the PUBRELs its acknowledgement reader
    /// answers with share it.
    /// </summary>
    public void Send(ReadOnlySpan<byte> data)
    {
        lock (sendLock)
        {
            socket.Send(data);
        }
    }

    public void Dispose() => socket.Dispose();

    /// <summary>A PUBLISH of <paramref name="payloadSize"/> zero bytes; at level 5 with an empty property block, so its packet id (QoS 1) sits 3 bytes before the payload instead of 2.</summary>
    public static byte[] Publish(string topic, int payloadSize, byte qos, ushort packetId = 1, byte level = 4)
    {
        var name = Encoding.UTF8.GetBytes(topic);
        byte[] body = [(byte)(name.Length >> 8), (byte)name.Length, .. name, .. qos > 0 ? new[] { (byte)(packetId >> 8), (byte)packetId } : [], .. level == 5 ? new byte[] { 0 } : [], .. new byte[payloadSize]];
        return Packet((byte)(0x30 | (qos << 1)), body);
    }

    private async Task<(byte Header, byte[] Body)> ReadPacketAsync(CancellationToken cancellationToken)
    {
        while (true)
        {
            if (TryTake(out var header, out var bodyStart, out var bodyLength))
            {
                return (header, buffer.AsSpan(bodyStart, bodyLength).ToArray());
            }

            Compact();
            var read = await socket.ReceiveAsync(buffer.AsMemory(end), SocketFlags.None, cancellationToken).ConfigureAwait(false);
            if (read == 0)
            {
                throw new IOException("the server closed the connection");
            }

            end += read;
        }
    }

    private bool TryTake(out byte header, out int bodyStart, out int bodyLength)
    {
        header = 0;
        bodyStart = 0;
        bodyLength = 0;
        if (end - start < 2)
        {
            return false;
        }

        var length = 0;
        var index = start + 1;
        for (var shift = 0; ; shift += 7, index++)
        {
            if (index >= end)
            {
                return false;
            }

            length |= (buffer[index] & 0x7F) << shift;
            if ((buffer[index] & 0x80) == 0)
            {
                break;
            }
        }

        if (end - (index + 1) < length)
        {
            return false;
        }

        header = buffer[start];
        bodyStart = index + 1;
        bodyLength = length;
        start = bodyStart + length;
        return true;
    }

    private void Compact()
    {
        if (start == end)
        {
            start = end = 0;
        }
        else if (start > buffer.Length / 2)
        {
            Buffer.BlockCopy(buffer, start, buffer, 0, end - start);
            end -= start;
            start = 0;
        }
    }

    private static byte[] Connect(string clientId, byte level)
    {
        var id = Encoding.UTF8.GetBytes(clientId);
        byte[] body = [0, 4, (byte)'M', (byte)'Q', (byte)'T', (byte)'T', level, 0x02, 0, 60, .. level == 5 ? new byte[] { 0 } : [], (byte)(id.Length >> 8), (byte)id.Length, .. id];
        return Packet(0x10, body);
    }

    private static byte[] Packet(byte header, byte[] body)
    {
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
}
