using System.Diagnostics;
using System.Net.Sockets;
using System.Net.WebSockets;
using Microsoft.Extensions.Logging;
using NATS.Client.Core;

namespace Broker.Compare.Load.Client;

/// <summary>
/// One run of a NATS.Client.Core workload: its deadline, and a watch over every connection it opens, so a connection
/// the server closes fails the run at once with its reason instead of hanging it to the deadline.
/// </summary>
/// <remarks>
/// NATS.Client.Core 3.3.2 has no option that stops reconnecting: <c>MaxReconnectRetry</c> is only consulted after a
/// failed attempt, and 0 means no limit, so after any close the client reconnects at once under a new cid and restores
/// its subscriptions; the messages sent meanwhile are gone, and a subscriber waits for them until the run's deadline.
/// Here every connect after the first is refused (<see cref="NatsConnection.OnConnectingAsync"/>), and the client's
/// <see cref="NatsConnection.ConnectionDisconnected"/> event fails the run. The client raises its events in order on
/// one queue, so a <c>-ERR</c> the server sent before closing (<see cref="NatsConnection.ServerError"/>) is known by
/// then; how the socket ended, by which side, the client only logs. A connection the workload disposes raises no
/// such event.
/// </remarks>
internal sealed class CoreRun : IDisposable
{
    // How long closing the connections of a failed run may take: disposing a publisher after its subscriber was lost
    // took 30 s (the client's command timeout) in 2 of ~40 test runs, and the failure must be reported at once.
    private static readonly TimeSpan FailedCloseWait = TimeSpan.FromSeconds(2);

    // How long a failed body waits for the disconnect that may have caused it (the client's event queue, plus the
    // watch's own wait for how the socket ended).
    private static readonly TimeSpan LostWait = TimeSpan.FromSeconds(2);

    private readonly CancellationTokenSource cancellation;
    private readonly CancellationToken caller;
    private readonly TaskCompletionSource lostSignal = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly List<NatsConnection> connections = [];
    private ConnectionLostException? lost;
    private int ended;

    public CoreRun(CancellationToken cancellationToken)
    {
        caller = cancellationToken;
        cancellation = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        cancellation.CancelAfter(WorkloadTiming.RunTimeout);
    }

    /// <summary>Cancelled by the caller, at the run's deadline, or as soon as a connection is lost.</summary>
    public CancellationToken Token => cancellation.Token;

    /// <summary>The first connection lost, if any: the run's failure.</summary>
    public ConnectionLostException? Lost => Volatile.Read(ref lost);

    /// <summary>
    /// Runs <paramref name="body"/> on the thread pool and waits for it. A lost connection is the run's failure
    /// whatever the body then threw (a cancelled read, a publish on a closed connection); the deadline is a timeout.
    /// </summary>
    public static T Run<T>(Func<CoreRun, Task<T>> body, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(body);
        using var run = new CoreRun(cancellationToken);
        var start = Stopwatch.GetTimestamp();
        try
        {
            return Task.Run(() => body(run), run.Token).GetAwaiter().GetResult();
        }
        catch (Exception ex) when (!cancellationToken.IsCancellationRequested)
        {
            // The body can fail first (a PING cancelled by the close) while the client is still queueing the event.
            run.lostSignal.Task.Wait(LostWait, CancellationToken.None);
            if (run.Lost is { } lost)
            {
                throw lost;
            }

            if (ex is OperationCanceledException && Stopwatch.GetElapsedTime(start) >= WorkloadTiming.RunTimeout)
            {
                throw new TimeoutException($"The run did not finish within {WorkloadTiming.RunTimeout.TotalSeconds:0} s.", ex);
            }

            throw;
        }
        finally
        {
            Volatile.Write(ref run.ended, 1);
            run.CloseConnections();
        }
    }

    /// <summary>
    /// Opens a watched connection named <paramref name="name"/> (as the server's log and <c>/connz</c> show it); the run
    /// closes it when the body returns.
    /// </summary>
    public async Task<NatsConnection> ConnectAsync(NatsEndpoint server, string name)
    {
        var watch = new Watch(this, name);
        var connection = new NatsConnection(CoreConnections.Options(server, name) with { LoggerFactory = watch });
        connection.OnConnectingAsync = watch.ConnectingAsync;
        connection.ServerError += watch.ServerErrorAsync;
        connection.ConnectionDisconnected += watch.DisconnectedAsync;
        try
        {
            await connection.ConnectAsync().ConfigureAwait(false);
            watch.Connected(connection);
            lock (connections)
            {
                connections.Add(connection);
            }

            return connection;
        }
        catch
        {
            await connection.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    public void Dispose() => cancellation.Dispose();

    /// <summary>Closes every connection the run opened, in order; a failed run waits at most <see cref="FailedCloseWait"/>.</summary>
    private void CloseConnections()
    {
        NatsConnection[] all;
        lock (connections)
        {
            all = [.. connections];
        }

        var closing = Task.Run(async () =>
        {
            foreach (var connection in all)
            {
                await connection.DisposeAsync().ConfigureAwait(false);
            }
        });
        if (Lost is null)
        {
            closing.GetAwaiter().GetResult();
        }
        else
        {
            closing.Wait(FailedCloseWait, CancellationToken.None);
        }
    }

    private void Fail(ConnectionLostException failure)
    {
        if (Volatile.Read(ref ended) != 0 || caller.IsCancellationRequested || Interlocked.CompareExchange(ref lost, failure, null) is not null)
        {
            return;
        }

        lostSignal.TrySetResult();
        try
        {
            // Callbacks asynchronously: the workload's continuations must not run on the client's event queue.
            _ = cancellation.CancelAsync();
        }
        catch (ObjectDisposedException)
        {
            // The run ended meanwhile.
        }
    }

    /// <summary>
    /// What one connection saw: its cid, the server's last <c>-ERR</c>, and how its socket ended, from the client's
    /// own log (it records no cause anywhere else; the log calls it makes are per connection event, never per message).
    /// </summary>
    private sealed class Watch(CoreRun run, string name) : ILoggerFactory, ILogger
    {
        // The read loop logs how the socket ended just after it wakes the reconnect loop, which raises the event.
        private static readonly TimeSpan ReasonWait = TimeSpan.FromMilliseconds(500);

        private readonly TaskCompletionSource<string> ended = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private string? serverError;
        private ulong? clientId;
        private int connected;

        public void Connected(NatsConnection connection)
        {
            clientId = connection.ServerInfo?.ClientId;
            Volatile.Write(ref connected, 1);
        }

        public ValueTask<(string Host, int Port)> ConnectingAsync((string Host, int Port) target)
            => Volatile.Read(ref connected) == 0
                ? ValueTask.FromResult(target)
                : throw new NatsException($"{name}: a benchmark connection never reconnects (the run has failed)");

        public ValueTask ServerErrorAsync(object? sender, NatsServerErrorEventArgs args)
        {
            Volatile.Write(ref serverError, args.Error);
            return ValueTask.CompletedTask;
        }

        public async ValueTask DisconnectedAsync(object? sender, NatsEventArgs args)
        {
            string how;
            try
            {
                how = await ended.Task.WaitAsync(ReasonWait).ConfigureAwait(false);
            }
            catch (TimeoutException)
            {
                how = "the client logged no cause";
            }

            var error = Volatile.Read(ref serverError);
            var reason = error is null ? "no -ERR from the server" : $"the server's -ERR: '{error}'";
            var id = clientId is { } cid ? $" (cid:{cid})" : string.Empty;
            run.Fail(new ConnectionLostException($"connection {name}{id} was disconnected: {how}; {reason}", clientId));
        }

        public ILogger CreateLogger(string categoryName) => this;

        public void AddProvider(ILoggerProvider provider)
        {
        }

        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel >= LogLevel.Debug;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (Volatile.Read(ref connected) != 0 && HowItEnded(exception, formatter(state, exception)) is { } how)
            {
                ended.TrySetResult(how);
            }
        }

        public void Dispose()
        {
        }

        private static string? HowItEnded(Exception? exception, string message)
        {
            // The client's read loop ends on its internal SocketClosedException: without an inner exception when a
            // read returned 0 bytes (the server closed the stream, TLS and WebSocket alike).
            if (exception?.GetType().Name == "SocketClosedException")
            {
                return exception.InnerException is { } inner ? Describe(inner) : "closed by the server (end of stream)";
            }

            if (message.StartsWith("Server didn't respond to our ping", StringComparison.Ordinal))
            {
                return "closed by the client: the server answered none of its PINGs";
            }

            return exception is null or OperationCanceledException or ObjectDisposedException ? null : $"closed by the client after: {message}: {exception.GetType().Name}: {exception.Message}";
        }

        private static string Describe(Exception exception)
        {
            var socket = exception as SocketException ?? exception.InnerException as SocketException;
            return (socket?.SocketErrorCode, exception) switch
            {
                (SocketError.ConnectionReset or SocketError.ConnectionAborted, _) => $"reset by the server ({socket!.Message})",
                (_, WebSocketException { WebSocketErrorCode: WebSocketError.ConnectionClosedPrematurely }) => "closed by the server without a WebSocket close frame",
                _ => $"the client's read failed: {exception.GetType().Name}: {exception.Message}",
            };
        }
    }
}
