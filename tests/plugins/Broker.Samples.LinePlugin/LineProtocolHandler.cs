using Broker.Abstractions;
using Microsoft.Extensions.Logging;

namespace Broker.Samples.LinePlugin;

/// <summary>
/// Serves the line protocol. Client commands, one per line (LF or CRLF):
/// <list type="bullet">
/// <item><c>CONNECT &lt;user&gt; &lt;password&gt;</c> or <c>CONNECT &lt;token&gt;</c> → <c>OK</c>: authenticates as a
/// user of the broker, whose permissions then apply (a refused command gets <c>ERR Permissions Violation ...</c>, as a
/// NATS client's -ERR). Without it the first command connects without credentials (<c>no_auth_user</c>, or a broker
/// without authorization). Refused credentials get <c>ERR Authorization Violation</c> and the connection closes.</item>
/// <item><c>SUB &lt;subject&gt;</c> → <c>OK</c>; matching messages then arrive as <c>MSG &lt;subject&gt; &lt;text&gt;</c>,
/// or as <c>REQ &lt;subject&gt; &lt;reply&gt; &lt;text&gt;</c> when the publisher waits for an answer
/// (answer with <c>PUB &lt;reply&gt; &lt;text&gt;</c>).</item>
/// <item><c>PUB &lt;subject&gt; &lt;text&gt;</c> → <c>OK</c>.</item>
/// <item><c>REQ &lt;subject&gt; &lt;text&gt;</c> → the answer as <c>MSG &lt;reply subject&gt; &lt;text&gt;</c>, or
/// <c>ERR no responders</c> / <c>ERR timeout</c> (5 seconds).</item>
/// </list>
/// Anything else gets <c>ERR ...</c>. Server lines end with CRLF. A line longer than <c>max_line</c> gets
/// <c>ERR line too long</c> and a client silent for <c>idle_timeout</c> gets <c>ERR idle timeout</c>; both are then
/// disconnected.
/// </summary>
public sealed class LineProtocolHandler : IProtocolHandler
{
    private readonly IMessageBus bus;
    private readonly LineSessionSettings settings;
    private readonly ILogger logger;

    public LineProtocolHandler(IMessageBus bus, LineSessionSettings settings, ILogger logger)
    {
        this.bus = bus;
        this.settings = settings;
        this.logger = logger;
    }

    public string Protocol => LinePlugin.Protocol;

    public async Task OnConnectionAsync(TransportConnection connection, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(connection);
        var remote = connection.RemoteEndPoint?.ToString() ?? "?";
        LineLog.Opened(logger, remote);
        var session = new LineSession(connection, bus, settings, logger);
        await using (session.ConfigureAwait(false))
        {
            await session.RunAsync(cancellationToken).ConfigureAwait(false);
        }

        LineLog.Closed(logger, remote);
    }
}
