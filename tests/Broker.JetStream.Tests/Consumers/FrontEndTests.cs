using Broker.Abstractions;
using Broker.JetStream.Internal.Consumers;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Tests.Consumers;

/// <summary>The pull and push front ends: request validation, the wait queue, max_bytes, statuses, interest, flow control, heartbeats.</summary>
public sealed class FrontEndTests
{
    private const long Second = 1_000_000_000;
    private readonly ConsumerOutbox outbox = new();
    private readonly TestInterest interest = new();

    [Fact]
    public void Pull_requests_are_parsed_as_nats_server_reads_them()
    {
        Assert.True(PullRequests.TryParse(""u8, out var batch, out _, out _, out _, out _, out _, out _));
        Assert.Equal(1, batch);
        Assert.True(PullRequests.TryParse(" 7 "u8, out batch, out _, out _, out _, out _, out _, out _));
        Assert.Equal(7, batch);
        Assert.True(PullRequests.TryParse("{\"batch\":3,\"expires\":2000000000,\"max_bytes\":100,\"no_wait\":true,\"idle_heartbeat\":500000000}"u8, out batch, out var expires, out var maxBytes, out var noWait, out var heartbeat, out _, out _));
        Assert.Equal((3, 2 * Second, 100L, true, Second / 2), (batch, expires, maxBytes, noWait, heartbeat));
        Assert.False(PullRequests.TryParse("{\"expires\":1000000000,\"idle_heartbeat\":600000000}"u8, out _, out _, out _, out _, out _, out var error, out _));
        Assert.Equal("heartbeat value too large", error);
    }

    [Fact]
    public void Pull_requests_beyond_the_limits_are_refused_with_nats_servers_statuses()
    {
        var pull = Pull(new ConsumerConfig { MaxRequestBatch = 5, MaxRequestMaxBytes = 10, MaxWaiting = 1 }, nothingPending: false);
        var now = GoTime.NowNanoseconds();
        pull.Add(ConsumerParts.Bytes("r1"), "9"u8, now, default);
        pull.Add(ConsumerParts.Bytes("r2"), "{\"max_bytes\":11}"u8, now, default);
        pull.Add(ConsumerParts.Bytes("r3"), "{bad"u8, now, default);
        pull.Add(ConsumerParts.Bytes("r4"), "1"u8, now, default);
        pull.Add(ConsumerParts.Bytes("r5"), "1"u8, now, default);
        var sent = ConsumerParts.Drain(outbox);
        Assert.Equal("r1 NATS/1.0 409 Exceeded MaxRequestBatch of 5\r\n\r\n", sent[0]);
        Assert.Equal("r2 NATS/1.0 409 Exceeded MaxRequestMaxBytes of 10\r\n\r\n", sent[1]);
        Assert.StartsWith("r3 NATS/1.0 400 Bad Request - ", sent[2], StringComparison.Ordinal);
        Assert.Equal("r5 NATS/1.0 409 Exceeded MaxWaiting\r\n\r\n", sent[3]);
        Assert.Equal(1, pull.Count);
        pull.Stop();
        Assert.Equal(["r4 NATS/1.0 409 Consumer Deleted\r\n\r\n"], ConsumerParts.Drain(outbox));
    }

    [Fact]
    public void A_no_wait_request_is_answered_at_once_when_nothing_is_pending_and_at_the_end_otherwise()
    {
        var pending = false;
        var pull = new PullRequests(new ConsumerConfig(), null, outbox, () => !pending, TestTimers.None);
        var now = GoTime.NowNanoseconds();
        pull.Add(ConsumerParts.Bytes("empty"), "{\"no_wait\":true}"u8, now, default);
        Assert.Equal(["empty NATS/1.0 404 No Messages\r\n\r\n"], ConsumerParts.Drain(outbox));
        Assert.Equal(0, pull.Count);

        pending = true;
        pull.Add(ConsumerParts.Bytes("some"), "{\"batch\":5,\"no_wait\":true}"u8, now, default);
        var request = pull.Next(now);
        Assert.NotNull(request);
        pull.AfterDelivery(request, now);
        Assert.Equal(4, request.Remaining);
        pull.EndOfStream();
        Assert.Equal(["some NATS/1.0 404 No Messages\r\n\r\n"], ConsumerParts.Drain(outbox));
        Assert.Equal(0, pull.Count);
        pull.Stop();
    }

    [Fact]
    public void Requests_are_served_round_robin_charged_for_max_bytes_and_expire_with_408()
    {
        var pull = Pull(new ConsumerConfig(), nothingPending: false);
        var now = GoTime.NowNanoseconds();
        interest.Listening.UnionWith(["a", "b", "c"]);
        pull.Add(ConsumerParts.Bytes("a"), "2"u8, now, default);
        pull.Add(ConsumerParts.Bytes("b"), "{\"batch\":5,\"max_bytes\":100}"u8, now, default);
        pull.Add(ConsumerParts.Bytes("c"), "{\"expires\":1000000000}"u8, now, default);

        var first = pull.Next(now)!;
        Assert.Equal("a"u8.ToArray(), first.Reply);
        pull.AfterDelivery(first, now);
        var second = pull.Next(now)!;
        Assert.Equal("b"u8.ToArray(), second.Reply);
        Assert.True(pull.Charge(second, 60));
        pull.AfterDelivery(second, now);
        Assert.False(pull.Charge(second, 60), "40 bytes left");
        Assert.Equal(["b NATS/1.0 409 Message Size Exceeds MaxBytes\r\nNats-Pending-Messages: 4\r\nNats-Pending-Bytes: 40\r\n\r\n"], ConsumerParts.Drain(outbox));

        // "c" expires: answered 408 when its time is up.
        pull.Expire(now + (2 * Second), new SequencePair(3, 4));
        Assert.Equal(["c NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 1\r\nNats-Pending-Bytes: 0\r\n\r\n"], ConsumerParts.Drain(outbox));
        Assert.Equal(1, pull.Count);

        // "a" went away: dropped without a word.
        interest.Listening.Remove("a");
        Assert.Null(pull.Next(now));
        Assert.Equal(0, pull.Count);
        Assert.Empty(ConsumerParts.Drain(outbox));
        pull.Stop();
    }

    [Fact]
    public void A_waiting_request_with_an_idle_heartbeat_gets_one_with_the_last_sequences()
    {
        var pull = Pull(new ConsumerConfig(), nothingPending: false);
        var now = GoTime.NowNanoseconds();
        pull.Add(ConsumerParts.Bytes("hb"), "{\"expires\":10000000000,\"idle_heartbeat\":1000000000}"u8, now, default);
        Assert.Equal(now + Second, pull.Expire(now, default));
        Assert.Empty(ConsumerParts.Drain(outbox));
        pull.Expire(now + Second, new SequencePair(3, 7));
        Assert.Equal(["hb NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 3\r\nNats-Last-Stream: 7\r\n\r\n"], ConsumerParts.Drain(outbox));
        pull.Stop();
    }

    [Fact]
    public void Push_delivers_only_while_someone_listens()
    {
        var push = new PushDelivery(new TestTimers(outbox: outbox, interest: interest));
        push.Start(new ConsumerConfig { DeliverSubject = "deliver" }, 0, watchWhileActive: false);
        Assert.False(push.Active);
        Assert.NotEqual(0, push.InactiveSince);
        Assert.False(push.CanDeliver());

        interest.Listening.Add("deliver");
        Assert.True(push.CanDeliver());
        Assert.True(push.Active);
        Assert.Equal(0, push.InactiveSince);

        push.Retarget("elsewhere"u8.ToArray());
        Assert.False(push.Active);
        Assert.Equal("elsewhere"u8.ToArray(), push.DeliverSubject);
        push.Stop();
    }

    [Fact(Timeout = 30_000)]
    public async Task A_listened_push_consumer_without_heartbeat_or_threshold_holds_no_timer_until_its_listener_goes()
    {
        // 10,000 idle MQTT QoS 1 consumers each woke every second to ask whether their subscriber was still there.
        var fired = 0;
        interest.Listening.Add("deliver");
        var push = new PushDelivery(new TestTimers(onFrontEndDue: () => Interlocked.Increment(ref fired), outbox: outbox, interest: interest));
        push.Start(new ConsumerConfig { DeliverSubject = "deliver" }, 0, watchWhileActive: false);
        Assert.True(push.Active);

        await Task.Delay(1_500);
        Assert.Equal(0, Volatile.Read(ref fired));
        Assert.True(push.IsBound());

        // The subscriber leaves: info says so at once, and the next delivery attempt starts the 100 ms watch.
        interest.Listening.Remove("deliver");
        Assert.False(push.IsBound());
        Assert.False(push.CanDeliver());
        var deadline = DateTime.UtcNow.AddSeconds(10);
        while (Volatile.Read(ref fired) == 0 && DateTime.UtcNow < deadline)
        {
            await Task.Delay(20);
        }

        Assert.NotEqual(0, Volatile.Read(ref fired));
        push.Stop();
    }

    [Fact]
    public void Push_flow_control_asks_at_half_the_window_and_pauses_until_answered()
    {
        interest.Listening.Add("deliver");
        var push = new PushDelivery(new TestTimers(outbox: outbox, interest: interest));
        push.Start(new ConsumerConfig { DeliverSubject = "deliver", FlowControl = true, Heartbeat = Second }, 0, watchWhileActive: false);

        // The window starts at 2 MiB: the request goes past 1 MiB, delivery pauses past 2 MiB.
        push.AfterDelivery(1024 * 1024 + 1);
        var request = Assert.Single(ConsumerParts.Drain(outbox));
        Assert.Equal("deliver NATS/1.0 100 FlowControl Request\r\n\r\n", request);
        var id = push.PendingFlowControl!;
        Assert.StartsWith("$JS.FC.S.C.", id, StringComparison.Ordinal);
        push.AfterDelivery(1024 * 1024);
        Assert.False(push.CanDeliver());

        // An idle heartbeat meanwhile names the stalled request.
        push.OnTimer(10 * Second, 0, new SequencePair(2, 2));
        Assert.Contains("Nats-Consumer-Stalled: " + id, Assert.Single(ConsumerParts.Drain(outbox)), StringComparison.Ordinal);

        Assert.False(push.OnFlowControl("$JS.FC.S.C.other"u8));
        Assert.True(push.OnFlowControl(ConsumerParts.Bytes(id)));
        Assert.Null(push.PendingFlowControl);
        Assert.True(push.CanDeliver());
        push.Stop();
    }

    [Fact]
    public void The_inactivity_clock_counts_from_creation_for_pull_and_from_the_last_listener_for_push()
    {
        var pull = Pull(new ConsumerConfig(), nothingPending: false);
        var clock = new InactivityClock(created: 0, push: null, pull, static () => { });
        clock.Configure(new ConsumerConfig());
        Assert.Equal(5 * Second, clock.Threshold);
        Assert.True(clock.Check(6 * Second));
        pull.LastRequest = 4 * Second;
        Assert.False(clock.Check(6 * Second));
        clock.Configure(new ConsumerConfig { Durable = "D" });
        Assert.Equal(0, clock.Threshold);
        clock.Stop();

        var push = new PushDelivery(new TestTimers(outbox: outbox, interest: interest));
        push.Start(new ConsumerConfig { DeliverSubject = "deliver" }, 0, watchWhileActive: true);
        var pushClock = new InactivityClock(created: 0, push, pull: null, static () => { });
        pushClock.Configure(new ConsumerConfig { InactiveThreshold = Second });
        var since = push.InactiveSince;
        Assert.False(pushClock.Check(since + (Second / 2)));
        Assert.True(pushClock.Check(since + Second));
        interest.Listening.Add("deliver");
        Assert.False(pushClock.Check(since + (2 * Second)));
        pushClock.Stop();
        push.Stop();
        pull.Stop();
    }

    private PullRequests Pull(ConsumerConfig config, bool nothingPending) =>
        new(config, interest, outbox, () => nothingPending, TestTimers.None);
}
