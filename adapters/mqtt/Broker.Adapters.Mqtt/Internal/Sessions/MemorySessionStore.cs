using System.Collections.Concurrent;

namespace Broker.Adapters.Mqtt.Internal.Sessions;

/// <summary>Sessions in the broker's memory: they survive a reconnect, not a restart.</summary>
internal sealed class MemorySessionStore : ISessionStore
{
    private readonly ConcurrentDictionary<string, SessionRecord> records = new(StringComparer.Ordinal);

    public ValueTask<SessionRecord?> LoadAsync(string clientId, CancellationToken cancellationToken)
        => ValueTask.FromResult(records.TryGetValue(clientId, out var record) ? record : null);

    public ValueTask SaveAsync(SessionRecord record, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(record);
        records[record.ClientId] = record;
        return ValueTask.CompletedTask;
    }

    public ValueTask DeleteAsync(string clientId, CancellationToken cancellationToken)
    {
        records.TryRemove(clientId, out _);
        return ValueTask.CompletedTask;
    }

    // Nothing outlives the broker's memory: QoS 2 publishes are delivered at PUBLISH, their identifiers in the session.
    public bool HoldsQos2 => false;

    public Task HoldAsync(string clientId, HeldPublish held) => Task.CompletedTask;

    public Task ReleaseAsync(string clientId, HeldPublish held) => Task.CompletedTask;

    public ValueTask<IReadOnlyCollection<HeldPublish>> LoadHeldAsync(string clientId, CancellationToken cancellationToken)
        => ValueTask.FromResult<IReadOnlyCollection<HeldPublish>>([]);
}
