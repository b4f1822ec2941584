using System.Buffers;
using System.Text;
using Broker.Abstractions;
using Broker.Core.Internal.Clients;
using Broker.TestKit;

namespace Broker.Core.Tests.Clients;

/// <summary>
/// A client that waited for thousands of replies at once (the MQTT adapter's bus client asking the JetStream API for
/// 10,000 sessions' consumers) gives its map of waiting requests' grown buckets back once they are answered (issue 25).
/// </summary>
public sealed class PendingRequestMapShrinkTests
{
    private const int Requests = 4096;

    [Fact(Timeout = 60_000)]
    public async Task The_map_of_waiting_requests_shrinks_once_they_are_answered()
    {
        await using var broker = await TestBroker.StartAsync();
        await using var responder = broker.Bus.CreateClient();
        await using var bus = broker.Bus.CreateClient();
        var requester = Assert.IsAssignableFrom<InProcessClient>(bus);

        var replies = new List<string>();
        var allArrived = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using var service = responder.Subscribe("svc", null, (in BusMessage message) =>
        {
            lock (replies)
            {
                replies.Add(Encoding.UTF8.GetString(message.ReplyTo));
                if (replies.Count == Requests)
                {
                    allArrived.TrySetResult();
                }
            }
        });

        var waiting = Enumerable.Range(0, Requests).Select(_ => bus.RequestAsync("svc", default, "q"u8.ToArray(), TimeSpan.FromSeconds(50))).ToArray();
        await allArrived.Task.WaitAsync(TimeSpan.FromSeconds(50));
        Assert.True(requester.PendingRequestCapacity >= Requests, $"capacity {requester.PendingRequestCapacity} with {Requests} waiting");

        foreach (var reply in replies)
        {
            responder.Publish(Encoding.UTF8.GetBytes(reply), default, ReadOnlySequence<byte>.Empty, new ReadOnlySequence<byte>("a"u8.ToArray()));
        }

        await responder.FlushAsync();
        var answered = await Task.WhenAll(waiting);
        Assert.All(answered, reply => Assert.Equal("a", Encoding.UTF8.GetString(reply.Payload.Span)));
        Assert.True(requester.PendingRequestCapacity < 1024, $"capacity {requester.PendingRequestCapacity} after the replies");

        // The client still makes requests afterwards.
        var again = bus.RequestAsync("svc", default, "q"u8.ToArray(), TimeSpan.FromSeconds(50));
        await WaitFor(() => replies.Count == Requests + 1);
        responder.Publish(Encoding.UTF8.GetBytes(replies[^1]), default, ReadOnlySequence<byte>.Empty, new ReadOnlySequence<byte>("b"u8.ToArray()));
        await responder.FlushAsync();
        Assert.Equal("b", Encoding.UTF8.GetString((await again).Payload.Span));
    }

    private static async Task WaitFor(Func<bool> condition)
    {
        for (var i = 0; i < 500 && !condition(); i++)
        {
            await Task.Delay(10);
        }

        Assert.True(condition());
    }
}
