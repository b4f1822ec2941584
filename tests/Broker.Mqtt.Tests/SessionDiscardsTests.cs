using Broker.Adapters.Mqtt.Internal.Sessions;
using Broker.TestKit;
using Microsoft.Extensions.Logging.Abstractions;

namespace Broker.Mqtt.Tests;

/// <summary>
/// The releases of closed clean sessions (their QoS 1 consumers' deletes) run beside the session manager's gate
/// (issue 25: 10,000 clients leaving were released one JetStream round trip at a time behind it); a client id that
/// comes back waits for its own.
/// </summary>
public sealed class SessionDiscardsTests
{
    [Fact(Timeout = 30_000)]
    public async Task A_release_runs_on_and_only_its_client_id_waits_for_it()
    {
        var discards = new SessionDiscards(NullLogger.Instance);
        var releases = new Dictionary<string, TaskCompletionSource>();
        Task Discard(SessionRecord record)
        {
            var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            releases[record.ClientId] = release;
            return release.Task;
        }

        discards.Start(Discard, new SessionRecord("a", [], 0));
        discards.Start(Discard, new SessionRecord("b", [], 0));
        Assert.Equal(2, discards.Count);

        var a = discards.WaitAsync("a");
        Assert.False(a.IsCompleted);
        Assert.True(discards.WaitAsync("c").IsCompleted);

        releases["b"].SetResult();
        Assert.True(await Eventually.TrueAsync(() => discards.Count == 1, TimeSpan.FromSeconds(10)));
        Assert.False(a.IsCompleted);

        // Failing is logged, never thrown at the client id that waits.
        releases["a"].SetException(new InvalidOperationException("the delete failed"));
        await a.WaitAsync(TimeSpan.FromSeconds(10));
        Assert.True(await Eventually.TrueAsync(() => discards.Count == 0, TimeSpan.FromSeconds(10)));
    }

    [Fact(Timeout = 30_000)]
    public async Task A_second_release_of_a_client_id_is_waited_for_with_the_first()
    {
        var discards = new SessionDiscards(NullLogger.Instance);
        var first = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var second = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        discards.Start(_ => first.Task, new SessionRecord("a", [], 0));
        discards.Start(_ => second.Task, new SessionRecord("a", [], 0));

        second.SetResult();
        var waiting = discards.WaitAsync("a");
        await Task.Delay(50);
        Assert.False(waiting.IsCompleted);
        first.SetResult();
        await waiting.WaitAsync(TimeSpan.FromSeconds(10));
        Assert.True(await Eventually.TrueAsync(() => discards.Count == 0, TimeSpan.FromSeconds(10)));
    }
}
