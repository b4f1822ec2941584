using System.Runtime.ExceptionServices;
using Broker.Abstractions;
using Broker.Adapters.Mqtt.Internal.JetStream;
using Broker.JetStream;
using Broker.Storage.MemStore;
using Broker.TestKit;

namespace Broker.Mqtt.Tests;

/// <summary>
/// Consumer deletes that get no answer in time (issue 25: a leave of 10,000 QoS 1 sessions queues as many deletes, most
/// of which outlived the timeout, and each was thrown through six frames to be logged at debug).
/// </summary>
public sealed class ConsumerDeleteTimeoutTests
{
    private static readonly AsyncLocal<bool> Counting = new();

    [Fact(Timeout = 30_000)]
    public async Task A_delete_without_an_answer_returns_false_and_throws_only_in_the_bus_client()
    {
        await using var broker = await TestBroker.StartAsync();
        await using var silent = broker.Bus.CreateClient();
        using var swallow = silent.Subscribe("$JS.API.CONSUMER.DELETE.>", null, (in BusMessage _) => { });
        await using var api = new JetStreamClient(broker.Bus.CreateClient(), TimeSpan.FromMilliseconds(200), ownsClient: true);

        var thrown = 0;
        void Count(object? sender, FirstChanceExceptionEventArgs e)
        {
            if (Counting.Value)
            {
                Interlocked.Increment(ref thrown);
            }
        }

        AppDomain.CurrentDomain.FirstChanceException += Count;
        try
        {
            Counting.Value = true;
            Assert.False(await api.TryDeleteConsumerAsync("S", "c1"));
            Counting.Value = false;
        }
        finally
        {
            AppDomain.CurrentDomain.FirstChanceException -= Count;
        }

        // The bus client's TimeoutException, once; nothing thrown again on the way out.
        Assert.Equal(1, Volatile.Read(ref thrown));
        Assert.Equal("no answer within 0.2s", api.NoAnswer);

        // The throwing delete keeps its contract.
        var error = await Assert.ThrowsAsync<JetStreamApiException>(() => api.DeleteConsumerAsync("S", "c1", CancellationToken.None));
        Assert.Equal(408, error.Code);
        Assert.Contains(api.NoAnswer, error.Message, StringComparison.Ordinal);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_delete_that_is_answered_returns_true_whether_the_consumer_was_there_or_not()
    {
        await using var broker = await TestBroker.StartAsync(plugins: [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = Path.Combine(Path.GetTempPath(), "mqtt-js-" + Guid.NewGuid().ToString("N")) }), new MemoryStorePlugin()]);
        await using var api = new JetStreamClient(broker.Bus.CreateClient(), ownsClient: true);
        await api.EnsureStreamAsync(new StreamSpec("T_DEL", ["t.del.>"], StreamRetention.Interest, -1, StreamStorage.Memory), CancellationToken.None);
        await api.CreateConsumerAsync("T_DEL", new ConsumerSpec("c1", "t.del.x", "deliver.c1", TimeSpan.FromSeconds(30), 100, ConsumerDeliverPolicy.New), CancellationToken.None);

        Assert.True(await api.TryDeleteConsumerAsync("T_DEL", "c1"));
        Assert.True(await api.TryDeleteConsumerAsync("T_DEL", "c1"));

        // Another API error is still thrown: the stream does not exist.
        await Assert.ThrowsAsync<JetStreamApiException>(() => api.TryDeleteConsumerAsync("T_NONE", "c1"));
    }
}
