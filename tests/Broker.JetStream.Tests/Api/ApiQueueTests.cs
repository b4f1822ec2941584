using Broker.JetStream.Internal;

namespace Broker.JetStream.Tests.Api;

/// <summary>The API loop's queue: order, the loop's wake-up and end, and its slots given back after a burst (issue 25).</summary>
public sealed class ApiQueueTests
{
    [Fact(Timeout = 30_000)]
    public async Task Requests_are_read_in_order_by_a_loop_that_waits_for_them_and_ends_after_the_last()
    {
        var queue = new ApiQueue<int>();
        var read = new List<int>();
        var loop = Task.Run(async () =>
        {
            while (await queue.WaitToReadAsync())
            {
                while (queue.TryRead(out var item))
                {
                    read.Add(item);
                }
            }
        });

        for (var i = 0; i < 100; i++)
        {
            Assert.True(queue.TryWrite(i));
            if (i % 10 == 0)
            {
                await Task.Delay(5);
            }
        }

        queue.Complete();
        Assert.False(queue.TryWrite(100));
        await loop.WaitAsync(TimeSpan.FromSeconds(20));
        Assert.Equal(Enumerable.Range(0, 100), read);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_burst_grows_the_ring_and_reading_it_gives_the_slots_back()
    {
        var queue = new ApiQueue<int>();
        for (var i = 0; i < 10_000; i++)
        {
            queue.TryWrite(i);
        }

        Assert.True(queue.Capacity >= 10_000);

        // Interleaved writes on the way down keep the order through every shrink.
        var next = 0;
        var written = 10_000;
        while (queue.TryRead(out var item))
        {
            Assert.Equal(next++, item);
            if (next % 1000 == 0 && written < 10_010)
            {
                queue.TryWrite(written++);
            }
        }

        Assert.Equal(written, next);
        Assert.True(queue.Capacity < ApiQueue<int>.TrimFrom, $"capacity {queue.Capacity} once empty");

        // Still a queue: the next request wakes a waiting loop.
        var waiting = queue.WaitToReadAsync();
        Assert.False(waiting.IsCompleted);
        queue.TryWrite(-1);
        Assert.True(await waiting);
        Assert.True(queue.TryRead(out var last) && last == -1);
    }
}
