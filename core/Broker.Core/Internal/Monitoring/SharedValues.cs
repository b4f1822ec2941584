using System.Runtime.InteropServices;

namespace Broker.Core.Internal.Monitoring;

/// <summary>
/// Equal values held once, counted by how many holders share them: the closed-connection ring keeps up to
/// max_closed_clients (10,000 by default) records whose strings (address, client library, version, subject, sid,
/// reason) are mostly equal, and one copy each is what lets the ring stay small (issue 25). A value is forgotten when
/// its last holder releases it, so nothing outlives the records (unlike <see cref="string.Intern(string)"/>). Not
/// thread-safe: the owner's lock covers it.
/// </summary>
/// <typeparam name="T">The value type; equality decides what is shared.</typeparam>
internal sealed class SharedValues<T>
    where T : class
{
    private readonly Dictionary<T, Holding> held;

    public SharedValues(IEqualityComparer<T>? comparer = null)
    {
        held = new Dictionary<T, Holding>(comparer);
    }

    /// <summary>Distinct values held now (tests read it).</summary>
    public int Count => held.Count;

    /// <summary>The shared copy equal to <paramref name="value"/> (the value itself when it is the first); <see langword="null"/> passes through.</summary>
    public T? Acquire(T? value)
    {
        if (value is null)
        {
            return null;
        }

        ref var holding = ref CollectionsMarshal.GetValueRefOrAddDefault(held, value, out var exists);
        if (!exists)
        {
            holding.Value = value;
        }

        holding.Count++;
        return holding.Value;
    }

    /// <summary>Whether a value equal to <paramref name="value"/> is held.</summary>
    public bool Contains(T value) => held.ContainsKey(value);

    /// <summary>One holder of <paramref name="value"/> let go; the last one forgets it. Returns whether it was the last.</summary>
    public bool Release(T? value)
    {
        if (value is null)
        {
            return false;
        }

        ref var holding = ref CollectionsMarshal.GetValueRefOrNullRef(held, value);
        if (System.Runtime.CompilerServices.Unsafe.IsNullRef(ref holding))
        {
            return false;
        }

        if (--holding.Count > 0)
        {
            return false;
        }

        held.Remove(value);
        if (held.Count == 0)
        {
            // A burst of distinct values (10,000 addresses, say) grew the table: give its buckets back too.
            held.TrimExcess();
        }

        return true;
    }

    private struct Holding
    {
        public T Value;
        public int Count;
    }
}
