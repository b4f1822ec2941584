using Broker.Core;
using Broker.Core.Auth;
using Broker.TestKit;

namespace Broker.WebSocket.Tests;

/// <summary>A WebSocket client's publish is mapped as a TCP client's (nats-server maps every client's).</summary>
public sealed class MappingTests
{
    [Fact(Timeout = 30_000)]
    public async Task A_ws_clients_publish_is_mapped()
    {
        await using var broker = await WsBroker.StartAsync(o => o.Mappings =
            [new MappingOptions { Source = "ws.*", Destinations = [new MappingDestinationOptions { Subject = "{{splitFromLeft(1,2)}}.mapped" }] }]);
        await using var ws = await WsNatsClient.ConnectAsync(broker.WebSocketUri());
        await using var tcp = await RawClient.ConnectAsync(broker.Port);
        await tcp.SendAsync("CONNECT {\"verbose\":false}\r\nSUB > 9\r\n");
        Assert.Equal(["PONG"], (await tcp.PingAndCollectAsync()).Lines);

        await ws.SendAsync("CONNECT {\"verbose\":false}\r\nPUB ws.abcd 2\r\nhi\r\nPING\r\n");
        Assert.Equal("PONG", await ws.ReadLineAsync());
        Assert.Equal(["MSG ab.cd.mapped 9 2", "hi", "PONG"], (await tcp.PingAndCollectAsync()).Lines);
    }
}
