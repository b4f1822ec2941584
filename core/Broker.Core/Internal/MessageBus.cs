using Broker.Abstractions;
using Broker.Core.Internal.Clients;

namespace Broker.Core.Internal;

/// <summary>
/// The broker's <see cref="IMessageBus"/>: opens in-process clients on the shared subject space, and answers whether a
/// subject has subscribers (<see cref="ISubjectInterest"/>).
/// </summary>
internal sealed class MessageBus(BrokerCore core) : IMessageBus, ISubjectInterest
{
    public IBusClient CreateClient(BusClientOptions? options = null) => new InProcessClient(core, options ?? new BusClientOptions());

    public bool HasInterest(ReadOnlySpan<byte> subject) => !core.SubList.Match(subject).IsEmpty;
}
