using Broker.Abstractions;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Clients;

namespace Broker.Core.Internal;

/// <summary>
/// The broker's <see cref="IMessageBus"/>: opens in-process clients on the shared subject space, and adapters'
/// connections authenticated as NATS connections are (<see cref="BusConnection"/>), each in its account; answers
/// whether a subject has subscribers in <c>$G</c> (<see cref="ISubjectInterest"/>).
/// </summary>
internal sealed class MessageBus(BrokerCore core) : IMessageBus, ISubjectInterest
{
    public IBusClient CreateClient(BusClientOptions? options = null)
    {
        options ??= new BusClientOptions();
        return new InProcessClient(core, options, ResolveAccount(core, options.Account, nameof(options)));
    }

    /// <summary>The global account's interest: <see cref="ISubjectInterest"/> means <c>$G</c> (see its remarks).</summary>
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

    /// <summary>The account a plugin names; <see langword="null"/> is <c>$G</c>; an unknown name is the caller's mistake.</summary>
    /// <exception cref="ArgumentException">No account has the name.</exception>
    public static Account ResolveAccount(BrokerCore core, string? name, string parameterName)
    {
        if (name is null)
        {
            return core.Accounts.Global;
        }

        return core.Accounts.TryGet(name, out var account)
            ? account
            : throw new ArgumentException($"There is no account '{name}'.", parameterName);
    }
}
