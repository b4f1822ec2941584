using Broker.TestKit;
using Xunit.Abstractions;

namespace Broker.WebSocket.Tests;

/// <summary>
/// A WebSocket subscriber that reads more slowly than its publisher writes holds the publisher back, as a plain TCP
/// one does, instead of being cut off as a slow consumer (<see cref="SlowSubscriberCheck"/>). The WebSocket buffer sits
/// above the socket's, each pausing its writer at three quarters of max_pending: producers stalled only when the
/// WebSocket buffer's flush stopped completing, so the two together passed max_pending (the slow-consumer rule) first,
/// and NATS.Client.Core's subscriber in the comparison harness's WebSocket pub/sub row was closed in about one run in
/// four (docs/benchmarks.md, the late-afternoon round of 2026-11-29; scripts/ws-pubsub-stall). Producers now stall on
/// the layers' sum (IPendingOutputFeature.WhenPendingAtMost; "tlsstall"). nats-server never closed it.
/// </summary>
public sealed class SlowSubscriberTests(ITestOutputHelper output)
{
    [Fact(Timeout = 180_000)]
    public Task A_slow_but_reading_websocket_subscriber_gets_everything_and_stays_connected()
        => SlowSubscriberCheck.RunAsync(
            output,
            () => WsBroker.StartAsync(SlowSubscriberCheck.Limits),
            broker => broker.WebSocketUri().ToString());
}
