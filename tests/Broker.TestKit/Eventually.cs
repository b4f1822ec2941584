namespace Broker.TestKit;

/// <summary>
/// Polls a condition that other threads make true (handlers of a real client, a broker's log, a monitoring
/// endpoint) until it holds or a deadline passes. <see cref="TrueAsync"/> never fails by itself (the caller asserts
/// on the state afterwards, so a failure shows what was there); <see cref="AssertAsync"/> fails naming what it
/// waited for.
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

    /// <summary>Waits until the async <paramref name="condition"/> holds; fails the test naming <paramref name="what"/> at the deadline.</summary>
    public static async Task AssertAsync(Func<Task<bool>> condition, string what, TimeSpan? timeout = null)
    {
        ArgumentNullException.ThrowIfNull(condition);
        var deadline = DateTime.UtcNow + (timeout ?? DefaultTimeout);
        while (!await condition().ConfigureAwait(false))
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new Xunit.Sdk.XunitException("Timed out waiting for " + what);
            }

            await Task.Delay(20).ConfigureAwait(false);
        }
    }
}
