using System.Net;
using Broker.TestKit;
using NATS.Client.Core;
using Xunit.Abstractions;

namespace Broker.Tls.Tests;

/// <summary>
/// Publishers stalled on a TLS subscriber that stopped reading go on the moment it is closed, by the slow-consumer
/// rule, a reset or a half-close (<see cref="StalledPublisherCheck"/>): the TLS buffer's drain waiter sits above the
/// socket's.
/// </summary>
public sealed class StalledPublisherTests(ITestOutputHelper output)
{
    [Theory(Timeout = 120_000)]
    [InlineData(1)]
    [InlineData(3)]
    public async Task Publishers_stalled_on_a_tls_subscriber_answer_a_ping_once_it_is_closed(int publishers)
    {
        await using var broker = await TlsBroker.StartAsync(TlsBroker.Settings(), StalledPublisherCheck.Limits);
        await StalledPublisherCheck.RunAsync(
            output,
            broker,
            broker.Url,
            SubscriberTransport.Tls,
            broker.EndPoint,
            publishers,
            StalledPublisherCheck.Iterations(30),
            options => options with { TlsOpts = new NatsTlsOpts { Mode = TlsMode.Require, CaFile = TestCertificates.Shared.CaFile } });
    }
}
