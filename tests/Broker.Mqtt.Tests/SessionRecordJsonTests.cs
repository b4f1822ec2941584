using System.Text.Json;
using Broker.Adapters.Mqtt.Internal.JetStream;
using Broker.Adapters.Mqtt.Internal.Sessions;

namespace Broker.Mqtt.Tests;

/// <summary>
/// The JSON a session is stored as in <c>$MQTT_sess</c> carries every public property of the session and subscription
/// records, so a property added to them is stored and read back without a change to the store.
/// </summary>
public sealed class SessionRecordJsonTests
{
    [Fact(Timeout = 10_000)]
    public async Task Every_property_of_the_records_is_stored_and_read_back()
    {
        await Task.Yield();
        var subscription = new SubscriptionRecord("$share/g/a/+/#", 2, NoLocal: true, RetainAsPublished: true, RetainHandling: 2, Identifier: 77);
        var record = new SessionRecord("client \"é\"", [subscription, subscription with { Filter = "b" }], 3600) { DisconnectedAt = 1_795_540_569_587 };

        var json = JsonSerializer.Serialize(record, MqttJsonContext.Default.SessionRecord);
        using (var document = JsonDocument.Parse(json))
        {
            var names = document.RootElement.EnumerateObject().Select(p => p.Name).ToHashSet();
            Assert.All(typeof(SessionRecord).GetProperties().Where(p => p.Name != "EqualityContract"), p => Assert.Contains(p.Name, names));
            var stored = document.RootElement.GetProperty(nameof(SessionRecord.Subscriptions))[0].EnumerateObject().Select(p => p.Name).ToHashSet();
            Assert.All(typeof(SubscriptionRecord).GetProperties().Where(p => p.Name != "EqualityContract"), p => Assert.Contains(p.Name, stored));
        }

        var back = JsonSerializer.Deserialize(json, MqttJsonContext.Default.SessionRecord);
        Assert.NotNull(back);
        Assert.Equal(json, JsonSerializer.Serialize(back, MqttJsonContext.Default.SessionRecord));
        Assert.Equal(record.Subscriptions, back.Subscriptions);
        Assert.Equal((record.ClientId, record.ExpiryInterval, record.DisconnectedAt), (back.ClientId, back.ExpiryInterval, back.DisconnectedAt));
    }
}
