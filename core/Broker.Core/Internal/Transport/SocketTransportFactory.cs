using System.IO.Pipelines;
using System.Net;
using Broker.Abstractions;

namespace Broker.Core.Internal.Transport;

/// <summary>The in-box <c>"tcp"</c> transport.</summary>
internal sealed class SocketTransportFactory : IConnectionListenerFactory
{
    public const string TransportName = "tcp";

    private readonly PipeScheduler outputReaderScheduler;

    public SocketTransportFactory(PipeScheduler? outputReaderScheduler = null)
    {
        this.outputReaderScheduler = outputReaderScheduler ?? SendLoopScheduler.Instance;
    }

    public string Name => TransportName;

    public ValueTask<IConnectionListener> BindAsync(EndPoint endPoint, TransportSettings settings, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(endPoint);
        ArgumentNullException.ThrowIfNull(settings);
        return ValueTask.FromResult<IConnectionListener>(new SocketListener(endPoint, settings, outputReaderScheduler));
    }
}
