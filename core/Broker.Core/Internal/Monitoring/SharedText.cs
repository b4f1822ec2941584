using System.Diagnostics.CodeAnalysis;

namespace Broker.Core.Internal.Monitoring;

/// <summary>
/// One copy of each text that many long-lived records repeat (the closed-connection ring's addresses, client names,
/// languages, versions, close reasons and sids): thousands of records then hold a reference each rather than a string
/// each. Bounded: once it holds <see cref="Capacity"/> texts, new ones are kept by their records as they are, so a stream
/// of distinct values cannot grow it. Not thread-safe (the ring's lock guards it).
/// </summary>
internal sealed class SharedText
{
    /// <summary>The most texts held.</summary>
    public const int Capacity = 4096;

    // Longer texts are rarely repeated (JWTs, long names) and would cost more to hash than they save.
    private const int MaxLength = 256;

    private readonly Dictionary<string, string> texts = new(StringComparer.Ordinal);

    /// <summary>The shared copy of <paramref name="text"/>, or <paramref name="text"/> itself.</summary>
    [return: NotNullIfNotNull(nameof(text))]
    public string? Share(string? text)
    {
        if (text is null || text.Length > MaxLength)
        {
            return text;
        }

        if (texts.TryGetValue(text, out var shared))
        {
            return shared;
        }

        if (texts.Count < Capacity)
        {
            texts.Add(text, text);
        }

        return text;
    }
}
