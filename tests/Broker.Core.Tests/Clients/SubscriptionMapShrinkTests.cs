using Broker.Abstractions;
using Broker.Core.Internal.Clients;
using Broker.TestKit;

namespace Broker.Core.Tests.Clients;

/// <summary>
/// A client that held thousands of subscriptions (an adapter's bus client serving 10,000 MQTT QoS 1 sessions) gives its
/// subscription map's grown buckets back once they went (issue 25): a Dictionary never shrinks by itself.
/// </summary>
public sealed class SubscriptionMapShrinkTests
{
    [Fact(Timeout = 60_000)]
    public async Task The_map_shrinks_as_the_subscriptions_go()
    {
        await using var broker = await TestBroker.StartAsync();
        await using var bus = broker.Bus.CreateClient();
        var client = Assert.IsAssignableFrom<ClientBase>(bus);
        var subscriptions = new List<IDisposable>();
        for (var i = 0; i < 4 * ClientBase.ShrinkSubscriptionsFrom; i++)
        {
            subscriptions.Add(bus.Subscribe($"many.{i}", null, static (in BusMessage _) => { }));
        }

        Assert.True(client.SubscriptionCapacity >= 4 * ClientBase.ShrinkSubscriptionsFrom);
        foreach (var subscription in subscriptions.Skip(8))
        {
            subscription.Dispose();
        }

        Assert.True(client.SubscriptionCapacity < ClientBase.ShrinkSubscriptionsFrom, $"capacity {client.SubscriptionCapacity}");

        // What is left still works, and the map grows again as needed.
        using var again = bus.Subscribe("many.again", null, static (in BusMessage _) => { });
        foreach (var subscription in subscriptions.Take(8))
        {
            subscription.Dispose();
        }
    }
}
