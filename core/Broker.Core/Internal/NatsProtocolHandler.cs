using Broker.Abstractions;
using Broker.Core.Internal.Clients;

namespace Broker.Core.Internal;

/// <summary>The in-box NATS client protocol, served through the same contract a plugin protocol uses.</summary>
internal sealed class NatsProtocolHandler(BrokerCore core) : IProtocolHandler
{
    public const string ProtocolName = "nats";

    public string Protocol => ProtocolName;

    public Task OnConnectionAsync(TransportConnection connection, CancellationToken cancellationToken)
        => new NatsClient(core, connection).RunAsync(cancellationToken);
}
