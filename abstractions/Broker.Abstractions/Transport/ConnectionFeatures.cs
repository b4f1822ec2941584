namespace Broker.Abstractions;

/// <summary>
/// A small type-keyed bag of per-connection features (TLS details, HTTP upgrade details, ...).
/// </summary>
/// <remarks>Written while the connection is set up and read afterwards; not meant for concurrent writers.</remarks>
public sealed class ConnectionFeatures
{
    private KeyValuePair<Type, object>[] items = [];

    /// <summary>Gets the feature of type <typeparamref name="T"/>, or <see langword="null"/>.</summary>
    /// <typeparam name="T">The feature type.</typeparam>
    /// <returns>The feature or <see langword="null"/>.</returns>
    public T? Get<T>()
        where T : class
    {
        foreach (var item in items)
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
        for (var i = 0; i < items.Length; i++)
        {
            if (items[i].Key == typeof(T))
            {
                items[i] = new(typeof(T), feature);
                return;
            }
        }

        items = [.. items, new(typeof(T), feature)];
    }
}
