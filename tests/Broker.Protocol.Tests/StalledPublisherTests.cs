using Xunit.Abstractions;

namespace Broker.Protocol.Tests;

/// <summary>
/// Publishers stalled on a TCP subscriber that stopped reading go on the moment it is closed, by the slow-consumer
/// rule, a reset or a half-close (<see cref="StalledPublisherCheck"/>).
/// </summary>
public sealed class StalledPublisherTests(ITestOutputHelper output)
{
    [Theory(Timeout = 120_000)]
    [InlineData(1)]
    [InlineData(3)]
    public async Task Publishers_stalled_on_a_tcp_subscriber_answer_a_ping_once_it_is_closed(int publishers)
    {
        await using var broker = await TestBroker.StartAsync(StalledPublisherCheck.Limits);
        await StalledPublisherCheck.RunAsync(output, broker, broker.Url, SubscriberTransport.Tcp, broker.EndPoint, publishers, StalledPublisherCheck.Iterations(30));
    }
}
