using System.Collections.Concurrent;
using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using Broker.Adapters.Mqtt.Internal.Sessions;
using Microsoft.Extensions.Logging;

namespace Broker.Adapters.Mqtt.Internal.JetStream;

/// <summary>
/// Sessions in JetStream's <c>$MQTT_sess</c>, as nats-server keeps them: one message per client id on
/// <c>$MQTT.sess.&lt;hash of the client id&gt;</c> (the stream keeps one per subject), its payload the JSON of the
/// <see cref="SessionRecord"/> (every property, so what is added to the record is stored without change here).
/// The client id is hashed because it may hold anything MQTT allows and a subject token may not; the record keeps
/// the id, so a hash collision is seen and not resumed as the other client's session.
/// </summary>
/// <remarks>
/// The subjects that hold a record are listed once at start (<see cref="LoadIndexAsync"/>) and kept up to date, so a
/// client without a stored session, the common case, connects without a round trip to JetStream.
/// </remarks>
internal sealed partial class JetStreamSessionStore(JetStreamClient api, ILogger logger) : ISessionStore
{
    private readonly ConcurrentDictionary<string, byte> stored = new(StringComparer.Ordinal);
    private bool indexed;

    // Whether the index ever held a session. Until one is stored (every client so far clean, the usual case of a burst
    // of clean sessions), a connect's load and a clean session's delete answer from the index without hashing the
    // client id into its subject: a SHA-256, a hex string and a concatenation per connect and per close (issue 25).
    private volatile bool everStored;

    /// <summary>Reads which client ids have a stored session (one request per page of subjects).</summary>
    public async Task LoadIndexAsync(CancellationToken cancellationToken)
    {
        foreach (var subject in await api.ListSubjectsAsync(MqttStreams.SessionStream, MqttStreams.SessionSubjectPrefix + ">", cancellationToken).ConfigureAwait(false))
        {
            stored[subject] = 0;
            everStored = true;
        }

        indexed = true;
    }

    public async ValueTask<SessionRecord?> LoadAsync(string clientId, CancellationToken cancellationToken)
    {
        if (indexed && !everStored)
        {
            return null;
        }

        var subject = Subject(clientId);
        if (indexed && !stored.ContainsKey(subject))
        {
            return null;
        }

        var message = await api.GetLastBySubjectAsync(MqttStreams.SessionStream, subject, cancellationToken).ConfigureAwait(false);
        if (message is null)
        {
            return null;
        }

        var record = JsonSerializer.Deserialize(message.Data, MqttJsonContext.Default.SessionRecord);
        if (record is null || !string.Equals(record.ClientId, clientId, StringComparison.Ordinal))
        {
            MqttLog.SessionHashCollision(logger, subject, record?.ClientId ?? "", clientId);
            return null;
        }

        return record;
    }

    public async ValueTask SaveAsync(SessionRecord record, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(record);
        var json = JsonSerializer.SerializeToUtf8Bytes(record, MqttJsonContext.Default.SessionRecord);
        var subject = Subject(record.ClientId);
        everStored = true;
        stored[subject] = 0;
        await api.PublishAsync(subject, default, json, cancellationToken).ConfigureAwait(false);
    }

    public async ValueTask DeleteAsync(string clientId, CancellationToken cancellationToken)
    {
        if (indexed && !everStored)
        {
            return;
        }

        var subject = Subject(clientId);
        if (indexed && !stored.ContainsKey(subject))
        {
            return;
        }

        await PurgeAwaitingReleaseAsync(clientId, cancellationToken).ConfigureAwait(false);
        await api.PurgeSubjectAsync(MqttStreams.SessionStream, subject, cancellationToken).ConfigureAwait(false);
        stored.TryRemove(subject, out _);
    }

    /// <summary>
    /// Purges the sessions that expired while the broker was down: their expiry timers lived in the memory of the
    /// broker that stopped, and a client that never comes back would otherwise leave its record for ever.
    /// </summary>
    /// <param name="discarded">Releases what a purged session held outside the store (its consumers), first.</param>
    /// <param name="kept">Given each session that has not expired, to start its expiry timer.</param>
    /// <param name="cancellationToken">Cancels the reading and purging.</param>
    /// <returns>How many were purged.</returns>
    public async Task<int> PurgeExpiredAsync(Func<SessionRecord, Task>? discarded, Action<SessionRecord>? kept, CancellationToken cancellationToken)
    {
        // Every kept session is known before an expired one releases its consumers: a shared subscription's consumer
        // stays while a kept session holds it.
        var expired = new List<(string Subject, SessionRecord Record)>();
        foreach (var stored in await api.ReadAllAsync(MqttStreams.SessionStream, null, cancellationToken).ConfigureAwait(false))
        {
            SessionRecord? record;
            try
            {
                record = JsonSerializer.Deserialize(stored.Data, MqttJsonContext.Default.SessionRecord);
            }
            catch (JsonException)
            {
                // Not ours to judge: left as it is, and ignored by LoadAsync's checks if it is read.
                continue;
            }

            if (record is not null && SessionManager.IsExpired(record))
            {
                expired.Add((stored.Subject, record));
            }
            else if (record is not null)
            {
                kept?.Invoke(record);
            }
        }

        var purged = 0;
        foreach (var (subject, record) in expired)
        {
            if (discarded is not null)
            {
                await discarded(record).ConfigureAwait(false);
            }

            await PurgeAwaitingReleaseAsync(record.ClientId, cancellationToken).ConfigureAwait(false);
            await api.PurgeSubjectAsync(MqttStreams.SessionStream, subject, cancellationToken).ConfigureAwait(false);
            purged++;
        }

        return purged;
    }

    /// <summary>The record's subject: the first 128 bits of the SHA-256 of the client id, in hex.</summary>
    public static string Subject(string clientId) => MqttStreams.SessionSubjectPrefix + Hash(clientId);

    /// <summary>The first 128 bits of the SHA-256 of the client id, in hex: the token that stands for it in subjects.</summary>
    private static string Hash(string clientId)
    {
        Span<byte> hash = stackalloc byte[32];
        SHA256.HashData(Encoding.UTF8.GetBytes(clientId), hash);
        return Convert.ToHexStringLower(hash[..16]);
    }
}
