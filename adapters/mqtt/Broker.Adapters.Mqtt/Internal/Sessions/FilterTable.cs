using System.Diagnostics.CodeAnalysis;

namespace Broker.Adapters.Mqtt.Internal.Sessions;

/// <summary>
/// Subscriptions by topic filter, sized to what sessions hold: most hold one, kept in two fields; from the second
/// filter on, a dictionary (a session is resident as long as its client is connected, and an empty or one-entry
/// dictionary costs about 200 bytes; issue 25). Filters compare ordinally; entries come back in the order they were
/// added. Not thread-safe: its owner guards it. A mutable struct, held in a field of its owner and never copied: as
/// an object of its own it cost every session twice (the session's and the connection's) 40 B (issue 25).
/// </summary>
internal struct FilterTable<T>
    where T : class
{
    private string? onlyFilter;
    private T? onlyValue;
    private Dictionary<string, T>? many;

    public readonly int Count => many?.Count ?? (onlyFilter is null ? 0 : 1);

    public readonly bool TryGetValue(string filter, [MaybeNullWhen(false)] out T value)
    {
        if (many is not null)
        {
            return many.TryGetValue(filter, out value);
        }

        if (onlyFilter is not null && string.Equals(onlyFilter, filter, StringComparison.Ordinal))
        {
            value = onlyValue!;
            return true;
        }

        value = null;
        return false;
    }

    public readonly bool ContainsKey(string filter) => TryGetValue(filter, out _);

    /// <summary>Adds the filter's entry or replaces it.</summary>
    public void Set(string filter, T value)
    {
        if (many is not null)
        {
            many[filter] = value;
        }
        else if (onlyFilter is null || string.Equals(onlyFilter, filter, StringComparison.Ordinal))
        {
            onlyFilter = filter;
            onlyValue = value;
        }
        else
        {
            many = new(StringComparer.Ordinal) { [onlyFilter] = onlyValue!, [filter] = value };
            onlyFilter = null;
            onlyValue = null;
        }
    }

    public bool Remove(string filter, [MaybeNullWhen(false)] out T value)
    {
        if (many is not null)
        {
            return many.Remove(filter, out value);
        }

        if (onlyFilter is not null && string.Equals(onlyFilter, filter, StringComparison.Ordinal))
        {
            value = onlyValue!;
            onlyFilter = null;
            onlyValue = null;
            return true;
        }

        value = null;
        return false;
    }

    public bool Remove(string filter) => Remove(filter, out _);

    /// <summary>A copy of the entries, in the order they were added.</summary>
    public readonly T[] ToArray() => many is not null ? [.. many.Values] : onlyFilter is null ? [] : [onlyValue!];

    public void Clear()
    {
        many = null;
        onlyFilter = null;
        onlyValue = null;
    }
}
