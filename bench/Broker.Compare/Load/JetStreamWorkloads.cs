using System.Diagnostics;
using System.Text;

namespace Broker.Compare.Load;

/// <summary>
/// JetStream publishing to a stream of the given <c>storage</c> ("memory" or "file"): one publisher, each message with a reply subject for its pub ack, at most
/// <c>window</c> messages unacknowledged (1: a synchronous publish waiting for each ack; more: an asynchronous
/// publisher with a window, as client libraries' async publish). The stream is created before and deleted after the
/// measured part. Units: acknowledged messages.
/// </summary>
internal sealed class JetStreamPublishWorkload(int payloadSize, int window, string storage = "memory") : IWorkload
{
    public long CalibrationCount => window == 1 ? 2_000 : 20_000;

    public long SmokeCount => 100;

    public Measurement Run(NatsEndpoint server, long count, string subject, CancellationToken cancellationToken)
    {
        using var scope = new RunScope(cancellationToken);
        var stream = JetStreamSession.StreamName(subject);
        using var setup = new JetStreamSession(server, "js-setup", scope);
        setup.CreateStream(stream, subject, storage);
        try
        {
            var inbox = "_JSPUB." + Guid.NewGuid().ToString("N");
            using var publisher = NatsSocket.Open(server, "js-pub", $"SUB {inbox}.* 1\r\n", scope);
            TimeSpan elapsed = default;
            scope.Start("js-pub", () =>
            {
                var buffer = new byte[64 * 1024];
                var scanner = new MessageScanner();
                var start = Stopwatch.GetTimestamp();
                JetStreamSession.WindowedPublish(publisher, subject, inbox, count, payloadSize, window, buffer, scanner);
                elapsed = Stopwatch.GetElapsedTime(start);
            });
            scope.Join(WorkloadTiming.RunTimeout);
            return new Measurement(count, count * payloadSize, elapsed);
        }
        finally
        {
            setup.DeleteStream(stream);
        }
    }
}

/// <summary>How a consume row reads a stream.</summary>
internal enum ConsumeMode
{
    /// <summary>
    /// An ordered consumer as the clients drive one: an ephemeral consumer (ack none, memory state, one replica) read
    /// with pull requests of 1,000 messages, a new request of 500 each time half has arrived.
    /// </summary>
    Ordered,

    /// <summary>A durable pull consumer with explicit acks: fetch 100, acknowledge each, fetch again.</summary>
    FetchAck,
}

/// <summary>
/// JetStream consumption from a stream (memory or file) filled beforehand with <c>count</c> messages (the fill is not measured):
/// the time from the consumer's first request to its last message. Units: messages received (and acknowledged).
/// </summary>
internal sealed class JetStreamConsumeWorkload(int payloadSize, ConsumeMode mode, string storage = "memory") : IWorkload
{
    private const int OrderedBatch = 1000;
    private const int FetchBatch = 100;

    public long CalibrationCount => 20_000;

    public long SmokeCount => 200;

    public Measurement Run(NatsEndpoint server, long count, string subject, CancellationToken cancellationToken)
    {
        using var scope = new RunScope(cancellationToken);
        var stream = JetStreamSession.StreamName(subject);
        using var setup = new JetStreamSession(server, "js-setup", scope);
        setup.CreateStream(stream, subject, storage);
        try
        {
            setup.Fill(subject, count, payloadSize);
            var consumer = "C" + Guid.NewGuid().ToString("N")[..8];
            if (mode == ConsumeMode.FetchAck)
            {
                setup.CreateConsumer(stream, consumer, $"{{\"durable_name\":\"{consumer}\",\"ack_policy\":\"explicit\",\"deliver_policy\":\"all\"}}");
            }

            var inbox = "_JSSUB." + Guid.NewGuid().ToString("N");
            using var reader = NatsSocket.Open(server, "js-consumer", $"SUB {inbox} 1\r\n", scope);
            TimeSpan elapsed = default;
            scope.Start("js-consumer", () =>
            {
                var start = Stopwatch.GetTimestamp();
                if (mode == ConsumeMode.Ordered)
                {
                    // Creating the ordered consumer is part of reading the stream, as it is for a client.
                    setup.CreateConsumer(stream, consumer, $"{{\"name\":\"{consumer}\",\"deliver_policy\":\"all\",\"ack_policy\":\"none\",\"mem_storage\":true,\"num_replicas\":1,\"inactive_threshold\":5000000000}}");
                    ReadOrdered(reader, stream, consumer, inbox, count);
                }
                else
                {
                    ReadWithAcks(reader, stream, consumer, inbox, count);
                }

                elapsed = Stopwatch.GetElapsedTime(start);
            });
            scope.Join(WorkloadTiming.RunTimeout);
            return new Measurement(count, count * payloadSize, elapsed);
        }
        finally
        {
            setup.DeleteStream(stream);
        }
    }

    private static void ReadOrdered(NatsSocket socket, string stream, string consumer, string inbox, long count)
    {
        var next = Encoding.ASCII.GetBytes($"$JS.API.CONSUMER.MSG.NEXT.{stream}.{consumer}");
        byte[] Request(int batch)
        {
            var body = Encoding.ASCII.GetBytes($"{{\"batch\":{batch},\"expires\":30000000000}}");
            return [.. "PUB "u8, .. next, (byte)' ', .. Encoding.ASCII.GetBytes(inbox), (byte)' ', .. Encoding.ASCII.GetBytes(body.Length.ToString(System.Globalization.CultureInfo.InvariantCulture)), .. "\r\n"u8, .. body, .. "\r\n"u8];
        }

        var first = Request(OrderedBatch);
        var more = Request(OrderedBatch / 2);
        socket.Send(first);
        var buffer = new byte[256 * 1024];
        var scanner = new MessageScanner();
        var handler = new DeliveryCounter(socket, null);
        long requested = OrderedBatch;
        while (handler.Received < count)
        {
            var received = socket.Receive(buffer);
            if (received == 0)
            {
                throw new IOException($"The server closed the connection after {handler.Received:N0} of {count:N0} messages.");
            }

            scanner.Feed(buffer.AsSpan(0, received), ref handler);

            // Keep about a batch in flight: ask for half a batch more whenever half has arrived.
            while (requested - handler.Received <= OrderedBatch / 2 && requested < count)
            {
                socket.Send(more);
                requested += OrderedBatch / 2;
            }
        }
    }

    private static void ReadWithAcks(NatsSocket socket, string stream, string consumer, string inbox, long count)
    {
        var body = Encoding.ASCII.GetBytes($"{{\"batch\":{FetchBatch},\"expires\":5000000000}}");
        var request = Encoding.ASCII.GetBytes($"PUB $JS.API.CONSUMER.MSG.NEXT.{stream}.{consumer} {inbox} {body.Length}\r\n{Encoding.ASCII.GetString(body)}\r\n");
        var buffer = new byte[256 * 1024];
        var scanner = new MessageScanner();
        var acks = new AckWriter();
        var handler = new DeliveryCounter(socket, acks);
        while (handler.Received < count)
        {
            socket.Send(request);
            var target = Math.Min(handler.Received + FetchBatch, count);
            while (handler.Received < target)
            {
                var received = socket.Receive(buffer);
                if (received == 0)
                {
                    throw new IOException($"The server closed the connection after {handler.Received:N0} of {count:N0} messages.");
                }

                scanner.Feed(buffer.AsSpan(0, received), ref handler);
            }

            acks.Flush(socket);
        }
    }

    /// <summary>Counts delivered messages (status messages such as heartbeats are not), noting ack subjects when asked.</summary>
    private struct DeliveryCounter(NatsSocket socket, AckWriter? acks) : IScanHandler
    {
        public long Received;

        public readonly bool WantsPayload => true;

        public void OnMessage(ReadOnlySpan<byte> replyTo, int size, ReadOnlySpan<byte> payload)
        {
            if (payload.StartsWith("NATS/1.0 "u8))
            {
                // A status: 100 heartbeats are fine, anything else (408, 409) means the run cannot go on.
                if (!payload.StartsWith("NATS/1.0 100"u8))
                {
                    throw new InvalidOperationException("Pull request ended: " + Encoding.ASCII.GetString(payload[..Math.Min(payload.Length, 60)]).Trim());
                }

                return;
            }

            Received++;
            acks?.Add(replyTo);
        }

        public readonly void OnPing() => socket.SendPong();

        public readonly void OnPong()
        {
        }
    }
}
