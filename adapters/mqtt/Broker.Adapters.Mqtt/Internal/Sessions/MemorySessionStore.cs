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

    // The identifiers are in the session's memory (MqttSession), which is all this store keeps anyway.
    public Task AwaitReleaseAsync(string clientId, ushort packetId) => Task.CompletedTask;

    public Task ReleaseAsync(string clientId, ushort packetId) => Task.CompletedTask;

    public ValueTask<IReadOnlyCollection<ushort>> LoadAwaitingReleaseAsync(string clientId, CancellationToken cancellationToken)
        => ValueTask.FromResult<IReadOnlyCollection<ushort>>([]);
}
