using System.Diagnostics;
using System.Net.Sockets;
using System.Text;

namespace Broker.Compare.Load;

/// <summary>
/// JetStream publishing: a stream is created on the row's subject with the given storage, then one publisher sends
/// PUBs with a reply subject and counts the acknowledgements, keeping at most <c>window</c> unacknowledged (100: the
/// asynchronous publishing of <c>nats bench js pub</c>'s default batch; 1,000: many publishers or a client's
/// concurrent publish API; 1: a synchronous publish that waits for each ack). The run ends with the last ack; the stream is deleted after it. An error ack fails the run. Units:
/// acknowledged publishes.
/// </summary>
internal sealed class JetStreamPublishWorkload(int payloadSize, int window, string storage) : IWorkload
{
    private static int streams;

    public long CalibrationCount => window >= 100 ? 20_000 : 1_000;

    public long SmokeCount => 500;

    public Measurement Run(NatsEndpoint server, long count, string subject, CancellationToken cancellationToken)
    {
        using var scope = new RunScope(cancellationToken);
        var stream = $"CMP{Environment.ProcessId}X{Interlocked.Increment(ref streams)}";
        var control = NatsSocket.Open(server, "js-api", "SUB _CMP.api 1\r\n", scope);
        JetStreamApi.Request(control, $"$JS.API.STREAM.CREATE.{stream}", $"{{\"name\":\"{stream}\",\"subjects\":[\"{subject}\"],\"storage\":\"{storage}\",\"num_replicas\":1}}");
        try
        {
            var publisher = NatsSocket.Open(server, "js-pub", "SUB _CMP.ack 1\r\n", scope);
            var frame = Encoding.ASCII.GetBytes($"PUB {subject} _CMP.ack {payloadSize}\r\n").Concat(Enumerable.Repeat((byte)'x', payloadSize)).Concat("\r\n"u8.ToArray()).ToArray();
            long acked = 0;
            long finishedAt = 0;
            using var go = new ManualResetEventSlim();
            scope.Start("js-acks", () =>
            {
                var buffer = new byte[64 * 1024];
                var scanner = new MessageScanner();
                var counter = new AckCounter(publisher);
                while (counter.Count < count)
                {
                    var received = publisher.Receive(buffer);
                    if (received == 0)
                    {
                        throw new IOException("the server closed the connection");
                    }

                    scanner.Feed(buffer.AsSpan(0, received), ref counter);
                    Volatile.Write(ref acked, counter.Count);
                }

                Volatile.Write(ref finishedAt, Stopwatch.GetTimestamp());
            });

            scope.Start("js-publish", () =>
            {
                go.Wait(scope.CancellationToken);
                var batch = new byte[frame.Length * Math.Min(window, 64)];
                long sent = 0;
                var spin = new SpinWait();
                while (sent < count)
                {
                    var allowed = (int)Math.Min(Math.Min(window - (sent - Volatile.Read(ref acked)), count - sent), batch.Length / frame.Length);
                    if (allowed <= 0)
                    {
                        spin.SpinOnce();
                        continue;
                    }

                    spin = default;
                    for (var i = 0; i < allowed; i++)
                    {
                        frame.CopyTo(batch, i * frame.Length);
                    }

                    publisher.Send(batch.AsSpan(0, allowed * frame.Length));
                    sent += allowed;
                }
            });

            var start = Stopwatch.GetTimestamp();
            go.Set();
            scope.Join(WorkloadTiming.RunTimeout);
            return new Measurement(count, count * payloadSize, WorkloadTiming.Between(start, Volatile.Read(ref finishedAt)));
        }
        finally
        {
            try
            {
                JetStreamApi.Request(control, $"$JS.API.STREAM.DELETE.{stream}", "");
            }
            catch (Exception ex) when (ex is IOException or SocketException or InvalidOperationException)
            {
                // The run's own failure matters more than the clean-up's.
            }
        }
    }

    private struct AckCounter(NatsSocket socket) : IScanHandler
    {
        public long Count;

        public readonly bool WantsPayload => true;

        public void OnMessage(ReadOnlySpan<byte> replyTo, int size, ReadOnlySpan<byte> payload)
        {
            if (payload.IndexOf("\"error\""u8) >= 0)
            {
                throw new InvalidOperationException("publish refused: " + Encoding.UTF8.GetString(payload));
            }

            Count++;
        }

        public readonly void OnPing() => socket.SendPong();

        public readonly void OnPong()
        {
        }
    }
}

/// <summary>JetStream API requests over a raw socket subscribed to <c>_CMP.api</c>.</summary>
internal static class JetStreamApi
{
    /// <summary>Sends a request and waits for its reply; throws when the reply is an API error.</summary>
    public static string Request(NatsSocket socket, string subject, string json)
    {
        var body = Encoding.UTF8.GetBytes(json);
        socket.Send(Encoding.ASCII.GetBytes($"PUB {subject} _CMP.api {body.Length}\r\n").Concat(body).Concat("\r\n"u8.ToArray()).ToArray());
        var buffer = new byte[64 * 1024];
        var scanner = new MessageScanner();
        var reply = new ReplyCatcher(socket);
        var deadline = DateTime.UtcNow + NatsSocket.IoTimeout;
        while (reply.Text is null && DateTime.UtcNow < deadline)
        {
            var received = socket.Receive(buffer);
            if (received == 0)
            {
                throw new IOException("the server closed the connection");
            }

            scanner.Feed(buffer.AsSpan(0, received), ref reply);
        }

        if (reply.Text is null || reply.Text.Contains("\"error\"", StringComparison.Ordinal))
        {
            throw new InvalidOperationException($"{subject} failed: {reply.Text ?? "no reply"}");
        }

        return reply.Text;
    }

    private struct ReplyCatcher(NatsSocket socket) : IScanHandler
    {
        public string? Text;

        public readonly bool WantsPayload => true;

        public void OnMessage(ReadOnlySpan<byte> replyTo, int size, ReadOnlySpan<byte> payload) => Text = Encoding.UTF8.GetString(payload);

        public readonly void OnPing() => socket.SendPong();

        public readonly void OnPong()
        {
        }
    }
}
