namespace Broker.Core.Internal.Clients;

/// <summary>
/// The places <c>max_connections</c> allows, counted for every kind of connection together (NATS, WebSocket, and
/// adapters' connections such as MQTT), as nats-server counts them all in one client map. The check and the count
/// are one interlocked step: connections arriving together cannot all see the same free place, which a check of the
/// registry followed by a separate registration allowed (6 admitted of 5 under a flood). In-process clients take no
/// place, as nats-server's internal clients take none.
/// </summary>
internal sealed class ConnectionAdmission
{
    /// <summary>nats-server's <c>DEFAULT_MAX_CONNECTIONS</c>, which a configured 0 also stands for.</summary>
    public const int DefaultLimit = 64 * 1024;

    private int taken;

    /// <summary>The places taken: admitted connections that have not yet left the registry.</summary>
    public int Taken => Volatile.Read(ref taken);

    /// <summary>
    /// The limit <paramref name="maxConnections"/> stands for, as nats-server reads it: 0 is the default (its
    /// <c>setBaselineOptions</c>), a negative value is no limit (it checks <c>MaxConn &gt; 0</c> before refusing).
    /// </summary>
    public static int Effective(int maxConnections) => maxConnections == 0 ? DefaultLimit : maxConnections;

    /// <summary>Whether <paramref name="count"/> connections are more than <paramref name="maxConnections"/> allows.</summary>
    public static bool Exceeds(int count, int maxConnections)
    {
        var limit = Effective(maxConnections);
        return limit > 0 && count > limit;
    }

    /// <summary>Takes a place unless all <paramref name="maxConnections"/> are taken.</summary>
    public bool TryTake(int maxConnections)
    {
        var limit = Effective(maxConnections);
        if (limit < 0)
        {
            Interlocked.Increment(ref taken);
            return true;
        }

        var current = Volatile.Read(ref taken);
        while (current < limit)
        {
            var seen = Interlocked.CompareExchange(ref taken, current + 1, current);
            if (seen == current)
            {
                return true;
            }

            current = seen;
        }

        return false;
    }

    /// <summary>Gives a place back; the caller makes sure it does so once for each place taken.</summary>
    public void Release() => Interlocked.Decrement(ref taken);
}
