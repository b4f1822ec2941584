using NATS.Client.Core;

namespace Broker.TestKit;

/// <summary>
/// Connections of the .NET client users run (NATS.Client.Core, NATS.Net v2) set up for tests: a bounded connect,
/// request and command timeout, and no reconnect loop (one retry at most, so a broker fault fails the test instead of
/// being retried away for minutes).
/// </summary>
/// <remarks>
/// The client announces headers and no_responders, answers server PINGs, and (as a 2.x client should) keeps the
/// connection open after a permissions -ERR, reporting it through <see cref="NatsConnection.ServerError"/>:
/// <see cref="ClientEvents"/> records it.
/// </remarks>
public static class NatsClients
{
    /// <summary>How long a test waits to connect, flush or for a message or reply unless it says otherwise.</summary>
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(5);

    /// <summary>Options for a test connection to <paramref name="url"/> named <paramref name="name"/>.</summary>
    public static NatsOpts Options(string url, string name = "test") => new()
    {
        Url = url,
        Name = name,
        ConnectTimeout = Timeout,
        RequestTimeout = Timeout,
        CommandTimeout = Timeout,
        MaxReconnectRetry = 1,
        ReconnectWaitMin = TimeSpan.FromMilliseconds(50),
        ReconnectWaitMax = TimeSpan.FromMilliseconds(100),
    };

    /// <summary>Connects to <paramref name="url"/>; <paramref name="configure"/> adds credentials and other options.</summary>
    /// <exception cref="NatsException">The server refused the connection (e.g. authorization violation).</exception>
    public static async Task<NatsConnection> ConnectAsync(string url, string name = "test", Func<NatsOpts, NatsOpts>? configure = null)
    {
        var options = Options(url, name);
        var connection = new NatsConnection(configure is null ? options : configure(options));
        try
        {
            await connection.ConnectAsync().ConfigureAwait(false);
            return connection;
        }
        catch
        {
            await connection.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    /// <summary>Options adding a user and password.</summary>
    public static NatsOpts WithUser(this NatsOpts options, string user, string password) =>
        options with { AuthOpts = options.AuthOpts with { Username = user, Password = password } };

    /// <summary>
    /// Waits for the next message of <paramref name="subscription"/>; throws <see cref="TimeoutException"/> when none
    /// comes within <paramref name="timeout"/> (default <see cref="Timeout"/>), and
    /// <see cref="InvalidOperationException"/> when the subscription ended (e.g. its max messages were delivered).
    /// </summary>
    public static async Task<NatsMsg<T>> NextAsync<T>(this INatsSub<T> subscription, TimeSpan? timeout = null)
    {
        ArgumentNullException.ThrowIfNull(subscription);
        using var cts = new CancellationTokenSource(timeout ?? Timeout);
        try
        {
            if (await subscription.Msgs.WaitToReadAsync(cts.Token).ConfigureAwait(false) && subscription.Msgs.TryRead(out var message))
            {
                return message;
            }
        }
        catch (OperationCanceledException) when (cts.IsCancellationRequested)
        {
            throw new TimeoutException($"No message on {subscription.Subject} within {timeout ?? Timeout}.");
        }

        throw new InvalidOperationException($"The subscription to {subscription.Subject} has ended.");
    }

    /// <summary>True when no message is waiting for <paramref name="subscription"/> (it may have ended).</summary>
    public static bool IsEmpty<T>(this INatsSub<T> subscription) => !subscription.Msgs.TryPeek(out _);
}
