using Broker.Abstractions;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Hosting;

/// <summary>
/// Runs one bound listener: accepts connections, passes each through the listener's middleware, then to its
/// protocol handler, and disposes it when the handler is done.
/// </summary>
internal sealed class ListenerHost : IServedConnectionEnd
{
    private readonly ListenerDefinition definition;
    private readonly IConnectionListener listener;
    private readonly IProtocolHandler handler;
    private readonly IReadOnlyList<IConnectionMiddleware> middleware;
    private readonly ILogger logger;
    private Task acceptLoop = Task.CompletedTask;
    private int accepting;

    // Connections being served, counted rather than kept in a set: a set cost every connection an entry and a
    // continuation to remove it (issue 24). Draining waits for the count to reach zero.
    private int active;
    private TaskCompletionSource? drained;

    // The token Start was given, which every connection of the listener is served with: read by a served connection's
    // watcher rather than held by each (8 B per connection, issue 25).
    private CancellationToken stopping;

    public ListenerHost(ListenerDefinition definition, IConnectionListener listener, IProtocolHandler handler, IReadOnlyList<IConnectionMiddleware> middleware, ILogger logger)
    {
        this.definition = definition;
        this.listener = listener;
        this.handler = handler;
        this.middleware = middleware;
        this.logger = logger;
    }

    public ListenerDefinition Definition => definition;

    public System.Net.EndPoint EndPoint => listener.EndPoint;

    /// <summary>Whether the accept loop runs (started and not yet unbound); /healthz reports it.</summary>
    public bool IsAccepting => Volatile.Read(ref accepting) != 0;

    /// <summary>Connections of this listener being served now.</summary>
    public int ActiveConnections => Volatile.Read(ref active);

    public void Start(CancellationToken stopping)
    {
        this.stopping = stopping;
        Volatile.Write(ref accepting, 1);
        acceptLoop = AcceptLoopAsync(stopping);
    }

    /// <summary>Stops accepting; connections already accepted keep running.</summary>
    public async Task UnbindAsync()
    {
        Volatile.Write(ref accepting, 0);
        await listener.UnbindAsync().ConfigureAwait(false);
        await acceptLoop.ConfigureAwait(false);
    }

    /// <summary>Waits for the connections of this listener to finish, at most <paramref name="timeout"/>.</summary>
    public async Task DrainAsync(TimeSpan timeout)
    {
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Volatile.Write(ref drained, done);
        if (Volatile.Read(ref active) == 0)
        {
            done.TrySetResult();
        }

        await Task.WhenAny(done.Task, Task.Delay(timeout)).ConfigureAwait(false);

        await listener.DisposeAsync().ConfigureAwait(false);
    }

    private async Task AcceptLoopAsync(CancellationToken stopping)
    {
        try
        {
            while (await listener.AcceptAsync(stopping).ConfigureAwait(false) is { } connection)
            {
                Interlocked.Increment(ref active);
                _ = ServeAsync(connection, stopping);
            }
        }
        finally
        {
            // However the loop ended, the listener no longer accepts: /healthz must say so.
            Volatile.Write(ref accepting, 0);
        }
    }

    private async Task ServeAsync(TransportConnection connection, CancellationToken stopping)
    {
        // Leave the accept loop at once; the connection's work starts on the thread pool. The built-in NATS handler
        // without middleware is the exception: its start (INFO queued, the place taken, the first read posted) is a
        // few microseconds that never block, and a thread-pool hop there sat on every connection's way to its INFO
        // (issue 24). Middleware and plugin handlers may do more before their first wait.
        if (middleware.Count > 0 || handler is not NatsProtocolHandler)
        {
            await Task.Yield();
        }

        connection.Features.Set(definition);
        var current = connection;
        var handedOff = false;
        try
        {
            foreach (var step in middleware)
            {
                var next = await step.OnConnectionAsync(current, stopping).ConfigureAwait(false);
                if (next is null)
                {
                    HostingLog.ConnectionRefused(logger, definition.Name, step.Name, current.RemoteEndPoint?.ToString() ?? "?");
                    return;
                }

                current = next;
            }

            if (middleware.Count == 0 && handler is IReportingProtocolHandler reporting)
            {
                // The handler tells Ended when it is done: no continuation or watcher per connection (issue 25).
                reporting.Serve(connection, this, stopping);
                handedOff = true;
                return;
            }

            var handling = handler.OnConnectionAsync(current, stopping);
            if (!handling.IsCompleted)
            {
                // What is left (disposing, counting the connection out) runs as the handler task's continuation, so
                // this state machine (about 210 B) does not stay for the connection's life (issue 25).
                new Served(this, connection, current, handling).Watch();
                handedOff = true;
                return;
            }

            await handling.ConfigureAwait(false);
        }
#pragma warning disable CA1031 // One failing connection must never take the listener down.
        catch (Exception ex)
#pragma warning restore CA1031
        {
            Failed(ex, current, stopping);
        }
        finally
        {
            if (!handedOff)
            {
                await FinishAsync(connection, current).ConfigureAwait(false);
            }
        }
    }

    /// <summary>A reporting handler is done with a connection of this listener (served without middleware).</summary>
    void IServedConnectionEnd.Ended(TransportConnection connection, Exception? failure)
    {
        ArgumentNullException.ThrowIfNull(connection);
        if (failure is not null)
        {
            Failed(failure, connection, stopping);
        }

        _ = FinishAsync(connection, connection);
    }

    /// <summary>Logs what ended a connection's handling, unless it was the listener stopping.</summary>
    private void Failed(Exception ex, TransportConnection current, CancellationToken stopping)
    {
        if (ex is not OperationCanceledException || !stopping.IsCancellationRequested)
        {
            HostingLog.ConnectionFailed(logger, definition.Name, current.RemoteEndPoint?.ToString() ?? "?", ex);
        }
    }

    /// <summary>Disposes a served connection (and the one below its middleware) and counts it out.</summary>
    private async Task FinishAsync(TransportConnection connection, TransportConnection current)
    {
        try
        {
            await current.DisposeAsync().ConfigureAwait(false);
            if (!ReferenceEquals(current, connection))
            {
                await connection.DisposeAsync().ConfigureAwait(false);
            }
        }
#pragma warning disable CA1031 // Disposal failures are logged, never thrown into the accept loop.
        catch (Exception ex)
#pragma warning restore CA1031
        {
            HostingLog.ConnectionFailed(logger, definition.Name, connection.RemoteEndPoint?.ToString() ?? "?", ex);
        }
        finally
        {
            if (Interlocked.Decrement(ref active) == 0)
            {
                Volatile.Read(ref drained)?.TrySetResult();
            }
        }
    }

    /// <summary>A connection whose handler is running: finishes it when the handler's task completes.</summary>
    private sealed class Served(ListenerHost host, TransportConnection connection, TransportConnection current, Task handling)
    {
        public void Watch() => handling.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(OnHandled);

        private void OnHandled()
        {
            try
            {
                handling.GetAwaiter().GetResult();
            }
#pragma warning disable CA1031 // One failing connection must never take the listener down.
            catch (Exception ex)
#pragma warning restore CA1031
            {
                host.Failed(ex, current, host.stopping);
            }

            _ = host.FinishAsync(connection, current);
        }
    }
}
