using Microsoft.Extensions.Logging;

namespace Broker.Adapters.Mqtt.Internal.Sessions;

/// <summary>
/// The releases of ended sessions still under way (their QoS 1 consumers' deletes), by client id. A closing clean
/// session starts its release and leaves the session manager's gate without waiting for it, so 10,000 clients leaving
/// at once are not released one round trip at a time behind the gate (issue 25); a client id that connects again
/// waits for its own release first, so the consumer names it creates never meet the deletes of its last session's.
/// </summary>
internal sealed class SessionDiscards(ILogger logger)
{
    // Grows with a leave of many clients and is emptied as their releases end: trimmed once empty.
    private readonly Dictionary<string, Task> pending = new(StringComparer.Ordinal);
    private int peak;

    /// <summary>How many releases are under way (tests read it).</summary>
    internal int Count
    {
        get
        {
            lock (pending)
            {
                return pending.Count;
            }
        }
    }

    /// <summary>
    /// Starts releasing <paramref name="record"/>'s session through <paramref name="discarded"/> (called now, so what it
    /// decides from the sessions' state is decided under the caller's gate); a failure is logged.
    /// </summary>
    public void Start(Func<SessionRecord, Task> discarded, SessionRecord record)
    {
        var clientId = record.ClientId;
        var release = ReleaseAsync(discarded, record);
        if (release.IsCompleted)
        {
            return;
        }

        Task waited;
        lock (pending)
        {
            // A release of this id still running from an earlier session is waited for with the new one (see WaitAsync).
            waited = pending.TryGetValue(clientId, out var earlier) ? Task.WhenAll(earlier, release) : release;
            pending[clientId] = waited;
            peak = Math.Max(peak, pending.Count);
        }

        _ = waited.ContinueWith((_, state) => ((SessionDiscards)state!).Ended(clientId), this, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
    }

    /// <summary>Completes when no release of <paramref name="clientId"/>'s last session is under way (never faults).</summary>
    public Task WaitAsync(string clientId)
    {
        lock (pending)
        {
            return pending.TryGetValue(clientId, out var release) ? release : Task.CompletedTask;
        }
    }

    private void Ended(string clientId)
    {
        lock (pending)
        {
            if (pending.TryGetValue(clientId, out var release) && release.IsCompleted)
            {
                pending.Remove(clientId);
            }

            if (pending.Count == 0 && peak >= 1024)
            {
                pending.TrimExcess();
                peak = 0;
            }
        }
    }

    private async Task ReleaseAsync(Func<SessionRecord, Task> discarded, SessionRecord record)
    {
        try
        {
            await discarded(record).ConfigureAwait(false);
        }
#pragma warning disable CA1031 // A failed release is logged; the session is gone either way.
        catch (Exception ex)
#pragma warning restore CA1031
        {
            MqttLog.SessionStoreFailed(logger, record.ClientId, "release", ex);
        }
    }
}
