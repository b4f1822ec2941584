using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;
using System.Text;
using Broker.Compare.Load;

namespace Broker.Bench.Tests.Compare;

/// <summary>
/// The load generator's WebSocket client decides what a subscriber over WebSocket "received", so its framing is
/// checked against a scripted server byte by byte: the upgrade, fragmented and interleaved frames split anywhere,
/// pings, closes, and the masked frames it sends.
/// </summary>
public sealed class WebSocketClientStreamTests
{
    private const string Nats = "INFO {}\r\nMSG a 1 5\r\nhello\r\nPING\r\n";

    [Fact]
    public void Handshake_then_data_of_binary_text_and_fragmented_frames_with_a_ping_between()
    {
        using var pair = ScriptedServer.Start();
        var payload = Encoding.ASCII.GetBytes(Nats + new string('x', 300));
        var frames = Frame(0x82, payload[..9])                // INFO: binary, final
            .Concat(Frame(0x01, payload[9..20]))                // text, not final
            .Concat(Frame(0x89, "p1"u8.ToArray()))              // ping between the fragments
            .Concat(Frame(0x00, payload[20..30]))               // continuation, not final
            .Concat(Frame(0x80, payload[30..]))                 // continuation, final (16-bit length)
            .Concat(Frame(0x82, []))                            // empty frame
            .ToArray();

        var stream = pair.Connect(afterHandshake: frames, chunk: 3);
        var read = ReadExactly(stream, payload.Length, bufferSize: 7);

        Assert.Equal(payload, read);
        var (opcode, pong) = pair.ReadClientFrame();
        Assert.Equal(0xA, opcode);
        Assert.Equal("p1"u8.ToArray(), pong);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(5)]
    [InlineData(125)]
    [InlineData(126)]
    [InlineData(65_535)]
    [InlineData(70_001)]
    public void Each_write_is_one_masked_binary_frame(int size)
    {
        using var pair = ScriptedServer.Start();
        var stream = pair.Connect(afterHandshake: [], chunk: int.MaxValue);
        var data = Enumerable.Range(0, size).Select(i => (byte)(i * 7)).ToArray();

        stream.Write(data);

        var (opcode, payload) = pair.ReadClientFrame();
        Assert.Equal(0x2, opcode);
        Assert.Equal(data, payload);
    }

    [Fact]
    public void A_close_frame_fails_the_read_with_its_status_and_reason_after_the_data_before_it()
    {
        using var pair = ScriptedServer.Start();
        var close = new byte[] { 0x03, 0xE8 }.Concat("bye"u8.ToArray()).ToArray();
        var stream = pair.Connect(afterHandshake: [.. Frame(0x82, "PING\r\n"u8.ToArray()), .. Frame(0x88, close)], chunk: int.MaxValue);

        Assert.Equal("PING\r\n"u8.ToArray(), ReadExactly(stream, 6, bufferSize: 64));
        var error = Assert.Throws<IOException>(() => stream.Read(new byte[64]));

        Assert.Contains("1000: bye", error.Message, StringComparison.Ordinal);
        var (opcode, echo) = pair.ReadClientFrame();
        Assert.Equal(0x8, opcode);
        Assert.Equal(close[..2], echo);
    }

    [Fact]
    public void A_wrong_accept_key_fails_the_upgrade()
    {
        using var pair = ScriptedServer.Start();

        var error = Assert.Throws<IOException>(() => pair.Connect(afterHandshake: [], chunk: int.MaxValue, accept: "bogus"));

        Assert.Contains("Sec-WebSocket-Accept", error.Message, StringComparison.Ordinal);
    }

    private static byte[] ReadExactly(Stream stream, int length, int bufferSize)
    {
        var result = new List<byte>();
        var buffer = new byte[bufferSize];
        while (result.Count < length)
        {
            var read = stream.Read(buffer);
            Assert.True(read > 0, $"end of stream after {result.Count} of {length} bytes");
            result.AddRange(buffer.AsSpan(0, read).ToArray());
        }

        return [.. result];
    }

    /// <summary>An unmasked server frame with the given first byte (FIN, opcode).</summary>
    private static byte[] Frame(byte first, byte[] payload)
    {
        var header = payload.Length switch
        {
            < 126 => new byte[] { first, (byte)payload.Length },
            <= ushort.MaxValue => [first, 126, (byte)(payload.Length >> 8), (byte)payload.Length],
            _ => throw new ArgumentOutOfRangeException(nameof(payload)),
        };
        return [.. header, .. payload];
    }

    /// <summary>A listening socket and the server side of one accepted connection, played by the test.</summary>
    private sealed class ScriptedServer : IDisposable
    {
        private readonly Socket listener;
        private readonly Socket client;
        private Socket? server;
        private Task? sending;

        private ScriptedServer(Socket listener, Socket client)
        {
            this.listener = listener;
            this.client = client;
        }

        public static ScriptedServer Start()
        {
            var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            listener.Listen(1);
            var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { ReceiveTimeout = 10_000, NoDelay = true };
            return new ScriptedServer(listener, client);
        }

        /// <summary>
        /// Connects the client and runs its upgrade against a server thread that checks the request, answers 101
        /// and sends <paramref name="afterHandshake"/> in the same write stream, in pieces of <paramref name="chunk"/> bytes.
        /// </summary>
        public WebSocketClientStream Connect(byte[] afterHandshake, int chunk, string? accept = null)
        {
            var address = (IPEndPoint)listener.LocalEndPoint!;
            client.Connect(address);
            server = listener.Accept();
            server.NoDelay = true;
            server.ReceiveTimeout = 10_000;
            var serverSide = Task.Run(() =>
            {
                var request = ReadHead(server);
                Assert.StartsWith("GET / HTTP/1.1\r\n", request, StringComparison.Ordinal);
                Assert.Contains("Upgrade: websocket\r\n", request, StringComparison.Ordinal);
                Assert.Contains("Sec-WebSocket-Version: 13\r\n", request, StringComparison.Ordinal);
                var key = request.Split("\r\n").Single(l => l.StartsWith("Sec-WebSocket-Key: ", StringComparison.Ordinal))[19..];
                var response = Encoding.ASCII.GetBytes($"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept ?? WebSocketClientStream.ExpectedAccept(key)}\r\n\r\n");
                byte[] all = [.. response, .. afterHandshake];
                for (var offset = 0; offset < all.Length; offset += chunk)
                {
                    server.Send(all.AsSpan(offset, Math.Min(chunk, all.Length - offset)));
                    if (chunk < all.Length)
                    {
                        // Let the client see this piece on its own, so frame headers arrive split.
                        Thread.Sleep(1);
                    }
                }
            });
            try
            {
                // The server goes on sending while the test reads, so the pieces arrive one by one.
                sending = serverSide;
                return WebSocketClientStream.Connect(client, address);
            }
            catch
            {
                // A failed check of the request is the more useful error.
                serverSide.GetAwaiter().GetResult();
                throw;
            }
        }

        /// <summary>Reads one frame the client sent, checks it is final and masked, and returns it unmasked.</summary>
        public (int Opcode, byte[] Payload) ReadClientFrame()
        {
            var header = Receive(2);
            Assert.Equal(0x80, header[0] & 0xF0);
            Assert.Equal(0x80, header[1] & 0x80);
            long length = header[1] & 0x7F;
            length = length switch
            {
                126 => BinaryPrimitives.ReadUInt16BigEndian(Receive(2)),
                127 => (long)BinaryPrimitives.ReadUInt64BigEndian(Receive(8)),
                _ => length,
            };
            var key = Receive(4);
            var payload = Receive((int)length);
            for (var i = 0; i < payload.Length; i++)
            {
                payload[i] ^= key[i & 3];
            }

            return (header[0] & 0x0F, payload);
        }

        public void Dispose()
        {
            sending?.GetAwaiter().GetResult();
            server?.Dispose();
            client.Dispose();
            listener.Dispose();
        }

        private byte[] Receive(int count)
        {
            var buffer = new byte[count];
            var read = 0;
            while (read < count)
            {
                var n = server!.Receive(buffer.AsSpan(read));
                Assert.True(n > 0, "the client closed the connection");
                read += n;
            }

            return buffer;
        }

        private static string ReadHead(Socket socket)
        {
            var head = new List<byte>();
            var one = new byte[1];
            while (head.Count < 4 || !head.TakeLast(4).SequenceEqual("\r\n\r\n"u8.ToArray()))
            {
                Assert.Equal(1, socket.Receive(one));
                head.Add(one[0]);
            }

            return Encoding.ASCII.GetString([.. head]);
        }
    }
}
