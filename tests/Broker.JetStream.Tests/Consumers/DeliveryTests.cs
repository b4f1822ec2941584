using System.Buffers;
using System.Diagnostics;
using System.Text;
using Broker.Abstractions;
using Broker.JetStream.Internal.Consumers;

namespace Broker.JetStream.Tests.Consumers;

/// <summary>The delivery side: ack subjects and sizes, headers-only bodies, pacing, and the runner.</summary>
public sealed class DeliveryTests
{
    [Fact]
    public void An_ack_subject_reads_back_and_its_size_is_what_nats_server_charges()
    {
        var format = new DeliveryFormat("ORDERS", "worker", headersOnly: false);
        Assert.Equal("$JS.ACK.ORDERS.worker.>", format.AckWildcard);
        var subject = format.AckSubject(2, 41, 7, 1_700_000_000_123_456_789, 12).ToArray();
        Assert.Equal("$JS.ACK.ORDERS.worker.2.41.7.1700000000123456789.12", Encoding.UTF8.GetString(subject));
        Assert.True(format.TryParseAckSubject(subject, out var streamSeq, out var consumerSeq, out var deliveryCount));
        Assert.Equal((41UL, 7UL, 2UL), (streamSeq, consumerSeq, deliveryCount));
        Assert.False(format.TryParseAckSubject("$JS.ACK.ORDERS.other.2.41.7.1.12"u8, out _, out _, out _));
        Assert.False(format.TryParseAckSubject("$JS.ACK.ORDERS.worker.2.41.7.1"u8, out _, out _, out _));

        var message = new StoredMessage();
        message.Set(41, 1_700_000_000_123_456_789, "orders.new"u8, "NATS/1.0\r\nA: b\r\n\r\n"u8, "payload"u8);
        var size = format.DeliverySize(message, 2, 7, 12);
        Assert.Equal(message.Subject.Length + subject.Length + message.Headers.Length + message.Payload.Length, size);
    }

    [Fact]
    public void Headers_only_sends_the_headers_with_the_payload_size()
    {
        var format = new DeliveryFormat("S", "C", headersOnly: true);
        var message = new StoredMessage();
        message.Set(1, 1, "a"u8, default, "12345"u8);
        var headers = format.Headers(message);
        Assert.Equal("NATS/1.0\r\nNats-Msg-Size: 5\r\n\r\n", Encoding.UTF8.GetString(headers.ToArray()));
        Assert.True(format.Payload(message).IsEmpty);
        var ack = format.AckSubject(1, 1, 1, 1, 0);
        Assert.Equal(message.Subject.Length + ack.Length + (int)headers.Length, format.DeliverySize(message, 1, 1, 0));

        message.Set(2, 1, "a"u8, "NATS/1.0\r\nA: b\r\n\r\n"u8, "12345"u8);
        Assert.Equal("NATS/1.0\r\nA: b\r\nNats-Msg-Size: 5\r\n\r\n", Encoding.UTF8.GetString(format.Headers(message).ToArray()));

        format.HeadersOnly = false;
        Assert.Equal("12345", Encoding.UTF8.GetString(format.Payload(message).ToArray()));
    }

    [Fact]
    public void Replay_at_the_original_pace_holds_a_message_for_its_gap_until_caught_up()
    {
        var pacer = new DeliveryPacer(static () => { });
        pacer.Start(replayOriginal: true, streamLastSequence: 3, rateLimitBitsPerSecond: 0, isPush: true, maxMessageSize: 0);
        var message = new StoredMessage();
        message.Set(1, 1_000_000_000, "a"u8, default, default);
        Assert.False(pacer.MustWait(message, 1, 0, replayDone: false));

        // 0.5 ms later: not waited for; 200 ms later: held.
        message.Set(2, 1_000_500_000, "a"u8, default, default);
        Assert.False(pacer.MustWait(message, 1, 0, replayDone: false));
        message.Set(3, 1_200_500_000, "a"u8, default, default);
        Assert.True(pacer.MustWait(message, 1, 0, replayDone: false));
        Assert.True(pacer.Holding);
        Assert.True(pacer.HeldNotDue());

        var sequence = pacer.TakeHeld(out var deliveryCount, out var replayDone);
        Assert.Equal((3UL, 1UL, true), (sequence, deliveryCount, replayDone));
        Assert.False(pacer.Holding);
        pacer.CheckReplayCaughtUp(nextStreamSequence: 3);
        Assert.True(pacer.Replaying);
        pacer.CheckReplayCaughtUp(nextStreamSequence: 4);
        Assert.False(pacer.Replaying);
        pacer.Stop();
    }

    [Fact(Timeout = 10_000)]
    public async Task The_rate_limit_lets_a_full_bucket_through_then_holds_until_it_refills()
    {
        var pacer = new DeliveryPacer(static () => { });
        pacer.Start(replayOriginal: false, 0, rateLimitBitsPerSecond: 8 * 1000, isPush: true, maxMessageSize: 1000);
        Assert.True(pacer.RateLimited);
        var message = new StoredMessage();
        message.Set(1, 1, "a"u8, default, default);
        Assert.False(pacer.MustWait(message, 1, 1000, replayDone: false));

        // 1000 bytes a second: the next 500 bytes wait about half a second.
        var started = Stopwatch.GetTimestamp();
        Assert.True(pacer.MustWait(message, 1, 500, replayDone: false));
        Assert.True(pacer.HeldNotDue());
        while (pacer.HeldNotDue())
        {
            await Task.Delay(10);
        }

        Assert.InRange(Stopwatch.GetElapsedTime(started), TimeSpan.FromMilliseconds(400), TimeSpan.FromSeconds(5));
        await Task.Delay(50);
        pacer.TakeHeld(out _, out var replayDone);
        Assert.False(pacer.MustWait(message, 1, 500, replayDone));
        pacer.Stop();

        var pull = new DeliveryPacer(static () => { });
        pull.Start(false, 0, rateLimitBitsPerSecond: 8, isPush: false, maxMessageSize: 0);
        Assert.False(pull.RateLimited);
    }

    [Fact]
    public void The_runner_sends_control_messages_plainly_and_stored_messages_under_their_own_subject()
    {
        var client = new RecordingClient();
        var runner = new ScriptedRunner(client, 3);
        runner.Kick();
        Assert.Equal(["status -> status", "deliver -> orders.1", "deliver -> orders.2"], client.Sent);
        Assert.Equal([2UL], runner.Removed);

        // A failing send is reported and the runner gives up its role, so the next kick delivers.
        runner.Fail = true;
        runner.Left = 1;
        runner.Kick();
        Assert.Single(runner.Failures);
        runner.Fail = false;
        runner.Left = 1;
        runner.Kick();
        Assert.Equal(4, client.Sent.Count);
    }

    [Fact(Timeout = 60_000)]
    public async Task Every_kick_after_new_work_gets_that_work_sent_even_while_a_runner_is_finishing()
    {
        // Rounds of two threads that each add one piece of work and kick at the same moment, then wait until both are
        // sent: the later kick often lands while the other thread's runner gives up its role, and no kick comes after it
        // in the round, so a lost wake-up leaves work unsent.
        var runner = new CountingRunner(new CountingClient());
        using var start = new Barrier(2);
        using var end = new Barrier(2);
        var budget = Stopwatch.StartNew();
        var unsent = 0L;
        var rounds = 0;
        var stop = false;
        var threads = Enumerable.Range(0, 2).Select(index => Task.Factory.StartNew(
            () =>
            {
                for (var i = 0; i < 200_000; i++)
                {
                    start.SignalAndWait();
                    runner.Add();
                    runner.Kick();
                    end.SignalAndWait();
                    if (index == 0)
                    {
                        var spin = Stopwatch.StartNew();
                        while (runner.Sent < runner.Added && spin.ElapsedMilliseconds < 1_000)
                        {
                            Thread.Yield();
                        }

                        unsent = runner.Added - runner.Sent;
                        rounds = i + 1;
                        stop = unsent != 0 || budget.ElapsedMilliseconds > 10_000;
                    }

                    // Both threads read the first thread's verdict on the round before the next starts.
                    start.SignalAndWait();
                    if (Volatile.Read(ref stop))
                    {
                        return;
                    }
                }
            },
            TaskCreationOptions.LongRunning)).ToArray();
        await Task.WhenAll(threads);
        Assert.True(unsent == 0, $"{unsent} piece(s) of work unsent after round {rounds}");
    }

    /// <summary>Sends one message per piece of work added; counts what it sent.</summary>
    private sealed class CountingRunner(IBusClient client) : DeliveryRunner
    {
        private readonly Lock gate = new();
        private long added;
        private long sent;

        public override IBusClient Client => client;

        public long Sent => Volatile.Read(ref sent);

        public long Added => Volatile.Read(ref added);

        /// <summary>One piece of work more; the count of sends that includes it.</summary>
        public long Add()
        {
            lock (gate)
            {
                return ++added;
            }
        }

        protected override bool TakeNext(ref DeliverySend send)
        {
            lock (gate)
            {
                if (sent == added)
                {
                    return false;
                }

                Volatile.Write(ref sent, sent + 1);
            }

            send.Subject = "work"u8;
            return true;
        }

        protected override void Delivered(ulong sequence)
        {
        }

        protected override void DeliveryFailed(Exception exception) => throw exception;
    }

    /// <summary>A bus client that drops what it is given.</summary>
    private sealed class CountingClient : IBusClient
    {
        public void Publish(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
        {
        }

        public void Publish(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
        {
        }

        public IBusSubscription Subscribe(string subject, string? queueGroup, BusMessageHandler handler) => throw new NotSupportedException();

        public Task<BusReply> RequestAsync(string subject, ReadOnlyMemory<byte> headers, ReadOnlyMemory<byte> payload, TimeSpan timeout, CancellationToken cancellationToken = default) =>
            throw new NotSupportedException();

        public ValueTask FlushAsync(CancellationToken cancellationToken = default) => ValueTask.CompletedTask;

        public string Account => "$G";

        public bool HasInterest(ReadOnlySpan<byte> subject) => false;

        public ValueTask DisposeAsync() => ValueTask.CompletedTask;
    }

    private sealed class ScriptedRunner(IBusClient client, int left) : DeliveryRunner
    {
        public override IBusClient Client => client;

        public int Left { get; set; } = left;

        public bool Fail { get; set; }

        public List<ulong> Removed { get; } = [];

        public List<Exception> Failures { get; } = [];

        protected override bool TakeNext(ref DeliverySend send)
        {
            if (Fail)
            {
                throw new InvalidOperationException("store failed");
            }

            if (Left == 0)
            {
                return false;
            }

            var index = Left--;
            if (index == 3)
            {
                send.Subject = "status"u8;
                return true;
            }

            send.Subject = "deliver"u8;
            send.DeliverAs = index == 2 ? "orders.1"u8 : "orders.2"u8;
            send.RemoveAfter = index == 1 ? 2UL : 0;
            return true;
        }

        protected override void Delivered(ulong sequence) => Removed.Add(sequence);

        protected override void DeliveryFailed(Exception exception) => Failures.Add(exception);
    }

    /// <summary>A bus client recording publishes; as every <see cref="IBusClient"/>, it publishes deliver-as too.</summary>
    private sealed class RecordingClient : IBusClient
    {
        public List<string> Sent { get; } = [];

        public void Publish(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload) =>
            Sent.Add(Encoding.UTF8.GetString(subject) + " -> " + Encoding.UTF8.GetString(subject));

        public void Publish(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload) =>
            Sent.Add(Encoding.UTF8.GetString(subject) + " -> " + Encoding.UTF8.GetString(deliverAs));

        public IBusSubscription Subscribe(string subject, string? queueGroup, BusMessageHandler handler) => throw new NotSupportedException();

        public Task<BusReply> RequestAsync(string subject, ReadOnlyMemory<byte> headers, ReadOnlyMemory<byte> payload, TimeSpan timeout, CancellationToken cancellationToken = default) =>
            throw new NotSupportedException();

        public ValueTask FlushAsync(CancellationToken cancellationToken = default) => ValueTask.CompletedTask;

        public string Account => "$G";

        public bool HasInterest(ReadOnlySpan<byte> subject) => false;

        public ValueTask DisposeAsync() => ValueTask.CompletedTask;
    }
}
