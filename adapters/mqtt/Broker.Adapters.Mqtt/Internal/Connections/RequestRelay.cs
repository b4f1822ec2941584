using System.Buffers;
using System.Buffers.Text;
using System.Globalization;
using System.Security.Cryptography;
using System.Text;
using Broker.Abstractions;
using Broker.Adapters.Mqtt.Internal.Headers;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>
/// MQTT 5 request/response over NATS request/reply, for requests that carry correlation data. The request is
/// published with a reply subject of this connection (<c>$MQTT.rsp.&lt;token&gt;.&lt;n&gt;</c>); a NATS responder
/// answers there, and the relay publishes the answer to the requester's response topic with the correlation data
/// restored, which a NATS responder knows nothing of. MQTT responders see the original response topic and correlation
/// data in the request's headers and answer directly. Entries expire after <see cref="Lifetime"/>; at most
/// <see cref="Capacity"/> are kept.
/// </summary>
internal sealed class RequestRelay : IDisposable
{
    public static readonly TimeSpan Lifetime = TimeSpan.FromMinutes(2);

    public const int Capacity = 1024;

    private readonly Lock gate = new();
    private readonly IBusClient bus;
    private readonly string prefix;
    private readonly Dictionary<long, Entry> pending = [];
    private readonly Queue<long> order = new();
    private IBusSubscription? subscription;
    private long next;

    public RequestRelay(IBusClient bus)
    {
        this.bus = bus;
        Span<byte> random = stackalloc byte[9];
        RandomNumberGenerator.Fill(random);
        prefix = "$MQTT.rsp." + Convert.ToHexString(random) + ".";
    }

    /// <summary>Registers a request; returns the reply subject to publish it with.</summary>
    public byte[] Register(ReadOnlySpan<byte> responseSubject, ReadOnlySpan<byte> correlation)
    {
        lock (gate)
        {
            subscription ??= bus.Subscribe(prefix + "*", null, OnReply);
            var now = Environment.TickCount64;
            while (order.Count > 0 && (order.Count >= Capacity || pending[order.Peek()].ExpiresAt < now))
            {
                pending.Remove(order.Dequeue());
            }

            var id = ++next;
            pending[id] = new Entry(responseSubject.ToArray(), correlation.ToArray(), now + (long)Lifetime.TotalMilliseconds);
            order.Enqueue(id);
            return Encoding.ASCII.GetBytes(prefix + id.ToString(CultureInfo.InvariantCulture));
        }
    }

    public void Dispose()
    {
        lock (gate)
        {
            subscription?.Dispose();
            subscription = null;
            pending.Clear();
        }
    }

    private void OnReply(in BusMessage message)
    {
        var subject = message.Subject;
        var dot = subject.LastIndexOf((byte)'.');
        if (!Utf8Parser.TryParse(subject[(dot + 1)..], out long id, out _) || NatsHeaderBlock.IsNoResponders(message.Headers))
        {
            return;
        }

        Entry entry;
        lock (gate)
        {
            if (!pending.TryGetValue(id, out entry!) || entry.ExpiresAt < Environment.TickCount64)
            {
                return;
            }
        }

        // The reply is published again from the thread pool, never inside the delivery of another publish.
        var headers = WithCorrelation(message.Headers, entry.Correlation);
        var payload = message.Payload.ToArray();
        ThreadPool.UnsafeQueueUserWorkItem(
            static state =>
            {
                try
                {
                    state.Bus.Publish(state.Subject, default, new ReadOnlySequence<byte>(state.Headers), new ReadOnlySequence<byte>(state.Payload));
                }
                catch (ObjectDisposedException)
                {
                    // The requester's connection closed meanwhile.
                }
            },
            (Bus: bus, Subject: entry.Subject, Headers: headers, Payload: payload),
            preferLocal: false);
    }

    private static byte[] WithCorrelation(in ReadOnlySequence<byte> headers, byte[] correlation)
    {
        var line = Encoding.ASCII.GetBytes(Encoding.ASCII.GetString(MqttHeaders.CorrelationData) + ": " + Convert.ToBase64String(correlation) + "\r\n");
        var block = new ArrayBufferWriter<byte>(64);
        if (headers.Length >= 4)
        {
            // Keep the responder's headers; the correlation line goes before the closing blank line.
            var existing = headers.ToArray();
            block.Write(existing.AsSpan(0, existing.Length - 2));
        }
        else
        {
            block.Write("NATS/1.0\r\nNmqtt-Pub:0\r\n"u8);
        }

        block.Write(line);
        block.Write("\r\n"u8);
        return block.WrittenSpan.ToArray();
    }

    private sealed record Entry(byte[] Subject, byte[] Correlation, long ExpiresAt);
}
