using System.Globalization;
using System.Text;
using NATS.Client.Core;

namespace Broker.TestKit;

/// <summary>
/// Records the protocol operations a real client's socket receives (INFO, MSG, HMSG, PING, PONG, +OK, -ERR), so a
/// test can assert what the server sent even where the client library hides it (e.g. messages the client would drop
/// for a subscription it already ended). Attach it before the connection connects.
/// </summary>
public sealed class ProtocolTap
{
    private readonly ReceivedBytes pending = new();
    private readonly List<string> operations = [];
    private long payloadToSkip;

    private ProtocolTap()
    {
    }

    /// <summary>The operation names received so far, in order (e.g. <c>INFO</c>, <c>PONG</c>, <c>MSG</c>).</summary>
    public IReadOnlyList<string> Operations
    {
        get
        {
            lock (operations)
            {
                return [.. operations];
            }
        }
    }

    /// <summary>Taps every socket <paramref name="connection"/> opens from now on.</summary>
    public static ProtocolTap Attach(NatsConnection connection)
    {
        ArgumentNullException.ThrowIfNull(connection);
        var tap = new ProtocolTap();
        connection.OnSocketAvailableAsync = socket => ValueTask.FromResult<INatsSocketConnection>(new TappedSocket(socket, tap));
        return tap;
    }

    /// <summary>How many times <paramref name="operation"/> was received.</summary>
    public int Count(string operation) => Operations.Count(o => o == operation);

    private void Received(ReadOnlySpan<byte> bytes)
    {
        lock (operations)
        {
            pending.Append(bytes);
            while (true)
            {
                if (payloadToSkip > 0)
                {
                    var skipped = (int)Math.Min(payloadToSkip, pending.Length);
                    pending.Take(skipped);
                    payloadToSkip -= skipped;
                    if (payloadToSkip > 0)
                    {
                        return;
                    }
                }

                if (pending.TakeLine(Encoding.Latin1) is not { } line)
                {
                    return;
                }

                var parts = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
                var operation = parts.Length == 0 ? string.Empty : parts[0].ToUpperInvariant();
                operations.Add(operation);
                if (operation is "MSG" or "HMSG")
                {
                    // The last argument is the (total) size; the payload and its CRLF follow.
                    payloadToSkip = long.Parse(parts[^1], CultureInfo.InvariantCulture) + 2;
                }
            }
        }
    }

    private sealed class TappedSocket(INatsSocketConnection inner, ProtocolTap tap) : INatsSocketConnection
    {
        public ValueTask<int> SendAsync(ReadOnlyMemory<byte> buffer) => inner.SendAsync(buffer);

        public async ValueTask<int> ReceiveAsync(Memory<byte> buffer)
        {
            var read = await inner.ReceiveAsync(buffer).ConfigureAwait(false);
            tap.Received(buffer.Span[..read]);
            return read;
        }

        public ValueTask DisposeAsync() => inner.DisposeAsync();
    }
}
