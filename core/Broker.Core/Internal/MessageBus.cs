using Broker.Abstractions;
using Broker.Core.Internal.Clients;

namespace Broker.Core.Internal;

/// <summary>
/// The broker's <see cref="IMessageBus"/>: opens in-process clients on the shared subject space, and adapters'
/// connections authenticated as NATS connections are (<see cref="BusConnection"/>); answers whether a subject has
/// subscribers (<see cref="ISubjectInterest"/>).
/// </summary>
internal sealed class MessageBus(BrokerCore core) : IMessageBus, ISubjectInterest
{
    public IBusClient CreateClient(BusClientOptions? options = null) => new InProcessClient(core, options ?? new BusClientOptions());

    public bool HasInterest(ReadOnlySpan<byte> subject) => !core.Accounts.Global.SubList.Match(subject).IsEmpty;

    public ValueTask<BusConnectResult> ConnectAsync(TransportConnection connection, BusConnectOptions options, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(connection);
        ArgumentNullException.ThrowIfNull(options);
        ArgumentException.ThrowIfNullOrWhiteSpace(options.Protocol, nameof(options));
        cancellationToken.ThrowIfCancellationRequested();
        ObjectDisposedException.ThrowIf(core.RunState is BrokerRunState.Stopping or BrokerRunState.Stopped, this);
        return ValueTask.FromResult(BusConnection.Connect(core, connection, options));
    }
}
