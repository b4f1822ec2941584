using Broker.Abstractions;
using Microsoft.Extensions.Logging;

namespace Broker.Samples.LinePlugin;

/// <summary>
/// Refuses line connections beyond a configured number open at once: the refused client reads
/// <c>ERR too many connections</c> and is disconnected.
/// </summary>
public sealed class ConnectionLimitMiddleware : IConnectionMiddleware
{
    /// <summary>The name the line listener refers to.</summary>
    public const string MiddlewareName = "line-limit";

    private static readonly byte[] Refusal = "ERR too many connections\r\n"u8.ToArray();

    private readonly int maxConnections;
    private readonly ILogger logger;
    private int open;

    public ConnectionLimitMiddleware(int maxConnections, ILogger logger)
    {
        this.maxConnections = maxConnections;
        this.logger = logger;
    }

    public string Name => MiddlewareName;

    public async ValueTask<TransportConnection?> OnConnectionAsync(TransportConnection connection, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(connection);
        if (Interlocked.Increment(ref open) > maxConnections)
        {
            Interlocked.Decrement(ref open);
            LineLog.Refused(logger, connection.RemoteEndPoint?.ToString() ?? "?", maxConnections);

            // The broker disposes a refused connection, which sends what was written before closing.
            await connection.Transport.Output.WriteAsync(Refusal, cancellationToken).ConfigureAwait(false);
            return null;
        }

        connection.ConnectionClosed.Register(static state => Interlocked.Decrement(ref ((ConnectionLimitMiddleware)state!).open), this);
        return connection;
    }
}
