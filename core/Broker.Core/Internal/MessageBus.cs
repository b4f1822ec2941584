using Broker.Abstractions;
using Broker.Core.Internal.Clients;

namespace Broker.Core.Internal;

/// <summary>The broker's <see cref="IMessageBus"/>: opens in-process clients on the shared subject space.</summary>
internal sealed class MessageBus(BrokerCore core) : IMessageBus
{
    public IBusClient CreateClient(BusClientOptions? options = null) => new InProcessClient(core, options ?? new BusClientOptions());
}
