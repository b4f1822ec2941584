using NATS.Client;

namespace Broker.TestKit;

/// <summary>
/// A connection of the legacy official .NET client (<c>NATS.Client</c> 0.8.0) set up for tests: no reconnects
/// (a broker fault must fail the test, not be retried away), a bounded connect timeout, and the client's
/// asynchronous error surface (async error events, the close event with its last error) recorded.
/// </summary>
/// <remarks>
/// This client speaks protocol 1 without headers, so the broker strips headers for it. It treats every -ERR other
/// than stale connection and authorization timeout as fatal: it closes the connection and reports the error as
/// <see cref="IConnection.LastError"/> with the text lower-cased (e.g. a permissions violation).
/// </remarks>
public sealed class NatsClientConnection : IDisposable
{
    /// <summary>Milliseconds the client waits to connect, flush or for a reply unless a test says otherwise.</summary>
    public const int DefaultTimeoutMilliseconds = 5000;

    private readonly List<string> asyncErrors = [];
    private readonly TaskCompletionSource<Exception?> closed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private IConnection? connection;

    static NatsClientConnection()
    {
        // The legacy client blocks thread-pool threads (RequestAsync runs a blocking Flush on the pool, sync
        // subscriptions block in NextMessage). An in-process broker answers from the same pool, so without spare
        // threads a burst of concurrent requests waits for the pool's slow thread injection and times out.
        ThreadPool.GetMinThreads(out var workers, out var completionPorts);
        ThreadPool.SetMinThreads(Math.Max(workers, 64), completionPorts);
    }

    private NatsClientConnection()
    {
    }

    public IConnection Connection => connection ?? throw new InvalidOperationException("Not connected.");

    /// <summary>Completes when the connection closes, with the client's last error (null for a clean close).</summary>
    public Task<Exception?> Closed => closed.Task;

    /// <summary>Errors the client reported through its async error handler (e.g. a slow subscriber of its own).</summary>
    public IReadOnlyList<string> AsyncErrors
    {
        get
        {
            lock (asyncErrors)
            {
                return [.. asyncErrors];
            }
        }
    }

    /// <summary>Connects to <paramref name="url"/>; <paramref name="configure"/> sets credentials and other options.</summary>
    /// <exception cref="NATSConnectionException">The server refused the connection (e.g. authorization violation).</exception>
    public static NatsClientConnection Connect(string url, Action<Options>? configure = null, string name = "test")
    {
        var result = new NatsClientConnection();
        var options = ConnectionFactory.GetDefaultOptions();
        options.Url = url;
        options.Name = name;
        options.AllowReconnect = false;
        options.Timeout = DefaultTimeoutMilliseconds;
        options.AsyncErrorEventHandler = (_, e) =>
        {
            lock (result.asyncErrors)
            {
                result.asyncErrors.Add(e.Error);
            }
        };
        options.ClosedEventHandler = (_, e) => result.closed.TrySetResult(e.Conn.LastError);
        configure?.Invoke(options);
        result.connection = new ConnectionFactory().CreateConnection(options);
        return result;
    }

    /// <summary>Waits for the connection to close; throws <see cref="TimeoutException"/> when it stays open.</summary>
    public async Task<Exception?> WaitClosedAsync(TimeSpan? timeout = null) =>
        await Closed.WaitAsync(timeout ?? TimeSpan.FromMilliseconds(DefaultTimeoutMilliseconds)).ConfigureAwait(false);

    public void Dispose()
    {
        connection?.Dispose();
    }
}
