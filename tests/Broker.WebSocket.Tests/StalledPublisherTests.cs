using System.Net;
using Broker.TestKit;
using Xunit.Abstractions;

namespace Broker.WebSocket.Tests;

/// <summary>
/// Publishers stalled on a WebSocket subscriber that stopped reading go on the moment it is closed, by the
/// slow-consumer rule, a reset or a half-close (<see cref="StalledPublisherCheck"/>): the WebSocket buffer's drain
/// waiter sits above the socket's.
/// </summary>
public sealed class StalledPublisherTests(ITestOutputHelper output)
{
    [Theory(Timeout = 120_000)]
    [InlineData(1)]
    [InlineData(3)]
    public async Task Publishers_stalled_on_a_websocket_subscriber_answer_a_ping_once_it_is_closed(int publishers)
    {
        await using var broker = await WsBroker.StartAsync(StalledPublisherCheck.Limits);
        await StalledPublisherCheck.RunAsync(
            output,
            broker,
            broker.WebSocketUri().ToString(),
            SubscriberTransport.WebSocket,
            new IPEndPoint(IPAddress.Loopback, broker.WebSocketPort()),
            publishers,
            StalledPublisherCheck.Iterations(30));
    }
}
