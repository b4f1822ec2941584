using System.Diagnostics;
using System.Net.Sockets;

namespace Broker.Compare.Load;

/// <summary>
/// Publishers pipelining PUBs to one subject and subscribers counting the MSG frames they receive. With no
/// subscribers it measures publish ingest (the run ends when a PING after the last PUB is answered). With
/// subscribers the run ends when the last subscriber has received every message: each subscriber must count
/// exactly <c>count</c> messages of the right size, so a server that drops messages fails instead of looking fast.
/// Units: messages received by all subscribers (published messages when there are none). With a
/// <paramref name="subscriberUser"/> the subscribers authenticate as that user and subscribe to
/// <paramref name="subscriberPrefix"/> + the subject: the stream-import row, where they are in the importing account.
/// Across a leaf link (<see cref="NatsEndpoint.SubscriberServer"/>) the subscribers connect to the other server and
/// publishing starts once their interest has crossed (<see cref="LinkInterest"/>).
/// </summary>
internal sealed class PubSubWorkload(int payloadSize, int publishers, int subscribers, string? subscriberUser = null, string subscriberPrefix = "") : IWorkload
{
    private const int ReceiveBufferSize = 256 * 1024;

    public long CalibrationCount => payloadSize >= 4096 ? 5_000 : 50_000;

    public long SmokeCount => payloadSize >= 4096 ? 100 : 2_000;

    public Measurement Run(NatsEndpoint server, long count, string subject, CancellationToken cancellationToken)
    {
        using var scope = new RunScope(cancellationToken);
        var subscriberSockets = new NatsSocket[subscribers];
        for (var i = 0; i < subscribers; i++)
        {
            subscriberSockets[i] = NatsSocket.Open(server.Subscribers, $"sub-{i}", $"SUB {subscriberPrefix}{subject} {i + 1}\r\n", scope, user: subscriberUser);
        }

        var publisherSockets = new NatsSocket[publishers];
        for (var i = 0; i < publishers; i++)
        {
            publisherSockets[i] = NatsSocket.Open(server, $"pub-{i}", scope: scope);
        }

        if (subscribers > 0)
        {
            LinkInterest.Wait(server, subject, scope.CancellationToken);
        }

        var frames = new PublishFrames(subject, payloadSize);
        using var go = new ManualResetEventSlim();
        var finishedAt = new long[Math.Max(subscribers, publishers)];
        for (var i = 0; i < subscribers; i++)
        {
            var index = i;
            scope.Start($"sub-{i}", () => finishedAt[index] = Receive(subscriberSockets[index], count));
        }

        for (var i = 0; i < publishers; i++)
        {
            var index = i;
            scope.Start($"pub-{i}", () =>
            {
                go.Wait(scope.CancellationToken);
                frames.Send(publisherSockets[index], WorkloadTiming.Share(count, publishers, index));

                // Without subscribers, the answer to this PING means the server has processed every PUB before it.
                publisherSockets[index].PingPong();
                if (subscribers == 0)
                {
                    finishedAt[index] = Stopwatch.GetTimestamp();
                }
            });
        }

        var start = Stopwatch.GetTimestamp();
        go.Set();
        scope.Join(WorkloadTiming.RunTimeout);
        var elapsed = WorkloadTiming.Between(start, finishedAt.Max());
        var messages = subscribers == 0 ? count : count * subscribers;
        return new Measurement(messages, messages * payloadSize, elapsed);
    }

    /// <summary>Counts MSG frames until <paramref name="expected"/> arrived; returns when the last one did.</summary>
    private long Receive(NatsSocket socket, long expected)
    {
        var buffer = new byte[ReceiveBufferSize];
        var scanner = new MessageScanner();
        var counter = new Counter(socket, payloadSize);
        try
        {
            while (counter.Count < expected)
            {
                var received = socket.Receive(buffer);
                if (received == 0)
                {
                    throw new IOException("the server closed the connection");
                }

                scanner.Feed(buffer.AsSpan(0, received), ref counter);
            }
        }
        catch (Exception ex) when (ex is IOException or SocketException or InvalidOperationException)
        {
            throw new InvalidOperationException($"Subscriber received {counter.Count:N0} of {expected:N0} messages: {ex.Message}", ex);
        }

        return Stopwatch.GetTimestamp();
    }

    private struct Counter(NatsSocket socket, int expectedSize) : IScanHandler
    {
        public long Count;

        public readonly bool WantsPayload => false;

        public void OnMessage(ReadOnlySpan<byte> replyTo, int size, ReadOnlySpan<byte> payload)
        {
            if (size != expectedSize)
            {
                throw new InvalidOperationException($"a message of {size} bytes arrived, {expectedSize} expected");
            }

            Count++;
        }

        public readonly void OnPing() => socket.SendPong();

        public readonly void OnPong()
        {
        }
    }
}
