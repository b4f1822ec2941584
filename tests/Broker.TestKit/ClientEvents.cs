using NATS.Client.Core;

namespace Broker.TestKit;

/// <summary>
/// What a <see cref="NatsConnection"/> reported asynchronously, recorded for assertions: server -ERR lines (e.g. a
/// permissions violation, which does not close a 2.x client's connection), disconnects, and the client's own slow
/// consumer and dropped-message events.
/// </summary>
public sealed class ClientEvents
{
    private readonly List<string> serverErrors = [];
    private readonly List<string> clientProblems = [];
    private readonly TaskCompletionSource<string> disconnected = new(TaskCreationOptions.RunContinuationsAsynchronously);

    private ClientEvents(NatsConnection connection)
    {
        connection.ServerError += (_, e) =>
        {
            lock (serverErrors)
            {
                serverErrors.Add(e.Error);
            }

            return default;
        };
        connection.ConnectionDisconnected += (_, e) =>
        {
            disconnected.TrySetResult(e.Message);
            return default;
        };
        connection.SlowConsumerDetected += (_, e) => Problem("slow consumer on " + e.Subscription.Subject);
        connection.MessageDropped += (_, e) => Problem("message dropped on " + e.Subject);
    }

    /// <summary>The -ERR texts the server sent, without the quotes, in order.</summary>
    public IReadOnlyList<string> ServerErrors
    {
        get
        {
            lock (serverErrors)
            {
                return [.. serverErrors];
            }
        }
    }

    /// <summary>Slow-consumer and dropped-message events the client raised about its own subscriptions.</summary>
    public IReadOnlyList<string> ClientProblems
    {
        get
        {
            lock (clientProblems)
            {
                return [.. clientProblems];
            }
        }
    }

    /// <summary>Completes when the connection is lost for the first time.</summary>
    public Task<string> Disconnected => disconnected.Task;

    /// <summary>Starts recording <paramref name="connection"/>'s events.</summary>
    public static ClientEvents Watch(NatsConnection connection)
    {
        ArgumentNullException.ThrowIfNull(connection);
        return new ClientEvents(connection);
    }

    /// <summary>
    /// Waits until the server has sent <paramref name="count"/> -ERR lines (default <see cref="NatsClients.Timeout"/>)
    /// and returns the last of them; throws <see cref="TimeoutException"/> otherwise.
    /// </summary>
    public async Task<string> ServerErrorAsync(int count = 1, TimeSpan? timeout = null)
    {
        if (!await Eventually.TrueAsync(() => ServerErrors.Count >= count, timeout ?? NatsClients.Timeout).ConfigureAwait(false))
        {
            throw new TimeoutException($"The server sent {ServerErrors.Count} of {count} -ERR lines.");
        }

        return ServerErrors[count - 1];
    }

    private ValueTask Problem(string text)
    {
        lock (clientProblems)
        {
            clientProblems.Add(text);
        }

        return default;
    }
}
