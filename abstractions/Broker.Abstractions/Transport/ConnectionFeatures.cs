namespace Broker.Abstractions;

/// <summary>
/// A small type-keyed bag of per-connection features (TLS details, HTTP upgrade details, ...).
/// </summary>
/// <remarks>Written while the connection is set up and read afterwards; not meant for concurrent writers.</remarks>
public sealed class ConnectionFeatures
{
    // The first two features in fields: a plain connection has two (its listener and its pending output), which in an
    // array cost 24 B more per connection (issue 25). Further ones go to the array.
    private Type? firstKey;
    private object? firstValue;
    private Type? secondKey;
    private object? secondValue;
    private KeyValuePair<Type, object>[] more = [];

    /// <summary>Gets the feature of type <typeparamref name="T"/>, or <see langword="null"/>.</summary>
    /// <typeparam name="T">The feature type.</typeparam>
    /// <returns>The feature or <see langword="null"/>.</returns>
    public T? Get<T>()
        where T : class
    {
        if (firstKey == typeof(T))
        {
            return (T)firstValue!;
        }

        if (secondKey == typeof(T))
        {
            return (T)secondValue!;
        }

        foreach (var item in more)
        {
            if (item.Key == typeof(T))
            {
                return (T)item.Value;
            }
        }

        return null;
    }

    /// <summary>Sets (or replaces) the feature of type <typeparamref name="T"/>.</summary>
    /// <typeparam name="T">The feature type.</typeparam>
    /// <param name="feature">The feature.</param>
    public void Set<T>(T feature)
        where T : class
    {
        ArgumentNullException.ThrowIfNull(feature);
        if (firstKey is null || firstKey == typeof(T))
        {
            firstKey = typeof(T);
            firstValue = feature;
            return;
        }

        if (secondKey is null || secondKey == typeof(T))
        {
            secondKey = typeof(T);
            secondValue = feature;
            return;
        }

        for (var i = 0; i < more.Length; i++)
        {
            if (more[i].Key == typeof(T))
            {
                more[i] = new(typeof(T), feature);
                return;
            }
        }

        more = [.. more, new(typeof(T), feature)];
    }
}
