using Broker.TestKit;
using NATS.Client.Core;
using Xunit.Abstractions;

namespace Broker.Tls.Tests;

/// <summary>
/// A TLS subscriber that reads more slowly than its publisher writes holds the publisher back, as a plain TCP one does,
/// instead of being cut off as a slow consumer (<see cref="SlowSubscriberCheck"/>). The TLS buffer of clear text sits
/// above the socket's: each paused its writer at three quarters of max_pending, so the two together passed max_pending
/// (the slow-consumer rule) while the flush the publisher stalled on still completed, and NATS.Client.Core reconnected
/// by itself, losing the messages in between (docs/benchmarks.md, "tlsstall"; scripts/ws-pubsub-stall with <c>tls</c>).
/// Producers now stall on the layers' sum (IPendingOutputFeature.WhenPendingAtMost). nats-server never closes it.
/// </summary>
public sealed class SlowSubscriberTests(ITestOutputHelper output)
{
    [Fact(Timeout = 180_000)]
    public Task A_slow_but_reading_tls_subscriber_gets_everything_and_stays_connected()
        => SlowSubscriberCheck.RunAsync(
            output,
            () => TlsBroker.StartAsync(TlsBroker.Settings(), SlowSubscriberCheck.Limits),
            broker => broker.Url,
            options => options with { TlsOpts = new NatsTlsOpts { Mode = TlsMode.Require, CaFile = TestCertificates.Shared.CaFile } });
}
