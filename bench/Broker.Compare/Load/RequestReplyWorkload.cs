using System.Buffers.Binary;
using System.Diagnostics;
using System.Text;

namespace Broker.Compare.Load;

/// <summary>
/// Request/reply: each client sends a request to a service subject with its own inbox as the reply subject and
/// waits for the answer before sending the next (one in flight per client, as a synchronous request API does).
/// Each request carries its send timestamp in the payload; a service echoes the payload (without any headers) back, and the client
/// computes the round trip from the timestamp it gets back. With a queue group, the server spreads requests over
/// the services. Units: completed round trips. With a <paramref name="serviceUser"/> the services authenticate as that
/// user and the service subject starts with <paramref name="servicePrefix"/>: the service-import row, where the
/// clients (anonymous, the configuration's <c>no_auth_user</c>) are in the importing account and the services in
/// the exporting one, so each request and reply crosses the import.
/// </summary>
internal sealed class RequestReplyWorkload(int payloadSize, int clients, int services, bool queueGroup, string? serviceUser = null, string servicePrefix = "") : IWorkload
{
    public long CalibrationCount => 2_000;

    public long SmokeCount => 100;

    public bool HasLatency => true;

    public Measurement Run(NatsEndpoint server, long count, string subject, CancellationToken cancellationToken)
    {
        if (payloadSize < sizeof(long))
        {
            throw new InvalidOperationException("Request payloads carry an 8-byte timestamp.");
        }

        using var scope = new RunScope(cancellationToken);
        var serviceSubject = servicePrefix + subject + ".svc";
        var queue = queueGroup ? " workers" : string.Empty;
        var serviceSockets = Enumerable.Range(0, services)
            .Select(i => NatsSocket.Open(server, $"svc-{i}", $"SUB {serviceSubject}{queue} 1\r\n", scope, user: serviceUser)).ToArray();
        var clientSockets = Enumerable.Range(0, clients)
            .Select(i => NatsSocket.Open(server, $"req-{i}", $"SUB {subject}.inbox.{i}.* 1\r\n", scope)).ToArray();

        var stopping = 0;
        foreach (var (socket, index) in serviceSockets.Select((s, i) => (s, i)))
        {
            scope.Start($"svc-{index}", () => Serve(socket, ref stopping));
        }

        var latencies = new long[clients][];
        var remaining = clients;
        long finishedAt = 0;
        using var go = new ManualResetEventSlim();
        for (var i = 0; i < clients; i++)
        {
            var index = i;
            scope.Start($"req-{i}", () =>
            {
                go.Wait(scope.CancellationToken);
                latencies[index] = Request(clientSockets[index], serviceSubject, $"{subject}.inbox.{index}.r", count);
                if (Interlocked.Decrement(ref remaining) == 0)
                {
                    Volatile.Write(ref finishedAt, Stopwatch.GetTimestamp());

                    // The services loop until their sockets close; closing them is their signal to stop.
                    Volatile.Write(ref stopping, 1);
                    foreach (var service in serviceSockets)
                    {
                        service.Dispose();
                    }
                }
            });
        }

        var start = Stopwatch.GetTimestamp();
        go.Set();
        scope.Join(WorkloadTiming.RunTimeout);
        var messages = count * clients;
        var all = latencies.SelectMany(l => l).ToArray();
        return new Measurement(messages, messages * payloadSize, WorkloadTiming.Between(start, finishedAt), LatencySummary.FromTicks(all));
    }

    private long[] Request(NatsSocket socket, string serviceSubject, string inbox, long count)
    {
        var header = Encoding.ASCII.GetBytes($"PUB {serviceSubject} {inbox} {payloadSize}\r\n");
        var frame = new byte[header.Length + payloadSize + 2];
        header.CopyTo(frame, 0);
        frame[^2] = (byte)'\r';
        frame[^1] = (byte)'\n';
        var stamp = frame.AsSpan(header.Length, sizeof(long));

        var latencies = new long[count];
        var buffer = new byte[64 * 1024];
        var scanner = new MessageScanner();
        var handler = new ReplyHandler(socket, payloadSize);
        for (long i = 0; i < count; i++)
        {
            BinaryPrimitives.WriteInt64LittleEndian(stamp, Stopwatch.GetTimestamp());
            socket.Send(frame);
            handler.Replied = false;
            while (!handler.Replied)
            {
                var received = socket.Receive(buffer);
                if (received == 0)
                {
                    throw new IOException($"The server closed the connection after {i:N0} of {count:N0} requests.");
                }

                scanner.Feed(buffer.AsSpan(0, received), ref handler);
            }

            latencies[i] = handler.RoundTrip;
        }

        return latencies;
    }

    /// <summary>Answers every request with its own payload; replies to one read go out in one write.</summary>
    private static void Serve(NatsSocket socket, ref int stopping)
    {
        var buffer = new byte[64 * 1024];
        var scanner = new MessageScanner();
        var handler = new ServiceHandler(socket);
        try
        {
            while (true)
            {
                var received = socket.Receive(buffer);
                if (received == 0)
                {
                    return;
                }

                scanner.Feed(buffer.AsSpan(0, received), ref handler);
                handler.Flush();
            }
        }
        catch (Exception) when (Volatile.Read(ref stopping) != 0)
        {
            // The clients are done and closed this service's socket.
        }
    }

    private struct ReplyHandler(NatsSocket socket, int expectedSize) : IScanHandler
    {
        public bool Replied;
        public long RoundTrip;

        public readonly bool WantsPayload => true;

        public void OnMessage(ReadOnlySpan<byte> replyTo, int size, ReadOnlySpan<byte> payload)
        {
            if (size != expectedSize)
            {
                throw new InvalidOperationException($"A reply of {size} bytes arrived, {expectedSize} expected.");
            }

            RoundTrip = Stopwatch.GetTimestamp() - BinaryPrimitives.ReadInt64LittleEndian(payload);
            Replied = true;
        }

        public readonly void OnPing() => socket.SendPong();

        public readonly void OnPong()
        {
        }
    }

    private struct ServiceHandler(NatsSocket socket) : IScanHandler
    {
        private readonly MemoryStream output = new();

        public readonly bool WantsPayload => true;

        public readonly void OnMessage(ReadOnlySpan<byte> replyTo, int size, ReadOnlySpan<byte> payload)
        {
            if (replyTo.IsEmpty)
            {
                throw new InvalidOperationException("A request arrived without a reply subject.");
            }

            // Through a service import the request arrives as HMSG with a Nats-Request-Info header (nats-server
            // adds it): the answer carries the body alone, as a service written with a client library does.
            if (payload.StartsWith("NATS/1.0"u8) && payload.IndexOf("\r\n\r\n"u8) is var headerEnd and >= 0)
            {
                payload = payload[(headerEnd + 4)..];
                size = payload.Length;
            }

            output.Write("PUB "u8);
            output.Write(replyTo);
            Span<byte> digits = stackalloc byte[16];
            System.Buffers.Text.Utf8Formatter.TryFormat(size, digits, out var length);
            output.WriteByte((byte)' ');
            output.Write(digits[..length]);
            output.Write("\r\n"u8);
            output.Write(payload);
            output.Write("\r\n"u8);
        }

        public readonly void OnPing() => output.Write("PONG\r\n"u8);

        public readonly void OnPong()
        {
        }

        public readonly void Flush()
        {
            if (output.Length > 0)
            {
                socket.Send(output.GetBuffer().AsSpan(0, (int)output.Length));
                output.SetLength(0);
            }
        }
    }
}
