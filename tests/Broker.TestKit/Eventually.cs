namespace Broker.TestKit;

/// <summary>
/// Polls a condition that other threads make true (handlers of a real client, a broker's log) until it holds or a
/// deadline passes. It never fails by itself: the caller asserts on the state afterwards, so a failure shows what
/// was there rather than a bare timeout.
/// </summary>
public static class Eventually
{
    public static readonly TimeSpan DefaultTimeout = TimeSpan.FromSeconds(10);

    /// <summary>Returns true as soon as <paramref name="condition"/> holds, false at the deadline.</summary>
    public static async Task<bool> TrueAsync(Func<bool> condition, TimeSpan? timeout = null)
    {
        ArgumentNullException.ThrowIfNull(condition);
        var deadline = DateTime.UtcNow + (timeout ?? DefaultTimeout);
        while (!condition())
        {
            if (DateTime.UtcNow >= deadline)
            {
                return false;
            }

            await Task.Delay(10).ConfigureAwait(false);
        }

        return true;
    }
}
