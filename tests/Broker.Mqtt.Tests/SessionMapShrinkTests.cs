using Broker.Adapters.Mqtt.Internal.Connections;
using Broker.Adapters.Mqtt.Internal.Sessions;
using Broker.TestKit;
using Microsoft.Extensions.DependencyInjection;

namespace Broker.Mqtt.Tests;

/// <summary>
/// The live-session map and the handler's connection set give their grown buckets back once most sessions went (issue
/// 25: after 10,000 clean sessions left, a ConcurrentDictionary that never shrinks kept 140 KB and 290 KB).
/// </summary>
public sealed class SessionMapShrinkTests
{
    [Fact(Timeout = 240_000)]
    public async Task The_live_session_map_is_replaced_by_a_smaller_one_once_most_sessions_left_and_the_rest_stay()
    {
        await using var broker = await MqttBroker.StartAsync();
        var clients = new List<RawMqtt>();
        try
        {
            var count = SessionManager.ShrinkLiveFrom + 100;
            for (var i = 0; i < count; i++)
            {
                clients.Add(await RawMqtt.ConnectedAsync(broker.MqttEndPoint(), $"shrink-{i}"));
            }

            var handler = broker.Server.Services.GetRequiredService<MqttProtocolHandler>();
            var sessions = Assert.Single(handler.Accounts.All).Sessions;
            Assert.Equal(count, sessions.Count);
            Assert.Equal(0, sessions.LiveShrinks);
            Assert.Equal(count, handler.ConnectionCount);
            Assert.Equal(0, handler.ConnectionShrinks);

            foreach (var client in clients.Skip(10))
            {
                await client.DisposeAsync();
            }

            Assert.True(await Eventually.TrueAsync(() => sessions.Count == 10, TimeSpan.FromSeconds(60)), $"{sessions.Count} sessions left");
            Assert.True(sessions.LiveShrinks >= 1, "the map was never replaced");
            Assert.True(await Eventually.TrueAsync(() => handler.ConnectionCount == 10, TimeSpan.FromSeconds(60)), $"{handler.ConnectionCount} connections left");
            Assert.True(handler.ConnectionShrinks >= 1, "the connection set was never replaced");

            // The ten still connected are still theirs: a takeover of one finds it (session present is 0 for clean
            // sessions, so check through the manager instead), and the handler's sweep still sees them.
            Assert.Equal(10, sessions.Connections.Count());
            Assert.Equal(10, handler.Connections.Count());
        }
        finally
        {
            foreach (var client in clients.Take(10))
            {
                await client.DisposeAsync();
            }
        }
    }
}
