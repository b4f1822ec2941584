using System.Diagnostics.CodeAnalysis;

namespace Broker.Host.Configuration.Conf;

/// <summary>
/// One <c>key = value</c> of a <see cref="ConfMap"/>, with where the key was written.
/// </summary>
internal sealed class ConfEntry
{
    /// <summary>Creates an entry.</summary>
    public ConfEntry(string key, ConfPosition keyPosition, ConfValue value)
    {
        Key = key;
        KeyPosition = keyPosition;
        Value = value;
    }

    /// <summary>The key exactly as written (quotes removed).</summary>
    public string Key { get; }

    /// <summary>Where the key starts; nats-server reports errors about a map value at its key.</summary>
    public ConfPosition KeyPosition { get; }

    /// <summary>The value.</summary>
    public ConfValue Value { get; }

    /// <summary>
    /// True when a later <c>$key</c> reference resolved to this entry. nats-server does not report
    /// such a key as an unknown field (it serves as a variable), so the options layer should skip an
    /// entry it does not know when this is set.
    /// </summary>
    public bool UsedAsVariable { get; private set; }

    internal void MarkUsedAsVariable() => UsedAsVariable = true;

    /// <inheritdoc/>
    public override string ToString() => $"{Key} = {Value}";
}

/// <summary>
/// A <c>{ key = value }</c> block, or the whole document. Entries keep source order; keys are stored
/// case-sensitively, as nats-server's parser does, while lookups ignore case, as nats-server's options
/// code does (it lower-cases keys before comparing them).
/// </summary>
/// <remarks>
/// Assigning an exact key twice keeps only the last assignment, moved to the end (nats-server stores
/// the map in a Go map, so the last assignment wins there too). Keys differing only in case are kept
/// apart; a case-insensitive lookup then answers the one assigned last.
/// </remarks>
internal sealed class ConfMap : ConfValue
{
    private readonly List<ConfEntry> entries;
    private readonly Dictionary<string, ConfEntry> exact;
    private readonly Dictionary<string, ConfEntry> anyCase;

    /// <summary>Creates an empty map, filled by the parser.</summary>
    internal ConfMap(ConfPosition position)
        : base(position)
    {
        ClosePosition = position;
        entries = [];
        exact = new Dictionary<string, ConfEntry>(StringComparer.Ordinal);
        anyCase = new Dictionary<string, ConfEntry>(StringComparer.OrdinalIgnoreCase);
    }

    // Shares the storage of another map; used when a variable reference re-positions a map.
    private ConfMap(ConfMap source, ConfPosition position)
        : base(position)
    {
        entries = source.entries;
        exact = source.exact;
        anyCase = source.anyCase;
        ClosePosition = source.ClosePosition;
    }

    /// <summary>
    /// Where the closing brace is (the opening position when there is none, as for the document): nats-server reports
    /// a map that is an array's item just after it.
    /// </summary>
    public ConfPosition ClosePosition { get; internal set; }

    /// <summary>The entries in the order they were (last) assigned.</summary>
    public IReadOnlyList<ConfEntry> Entries => entries;

    /// <summary>Number of distinct keys.</summary>
    public int Count => entries.Count;

    /// <inheritdoc/>
    public override string TypeName => "map";

    /// <summary>Finds the value of <paramref name="key"/>, ignoring letter case.</summary>
    public bool TryGet(string key, [NotNullWhen(true)] out ConfValue? value)
    {
        if (anyCase.TryGetValue(key, out var entry))
        {
            value = entry.Value;
            return true;
        }
        value = null;
        return false;
    }

    /// <summary>Finds the entry of <paramref name="key"/>, ignoring letter case.</summary>
    public bool TryGetEntry(string key, [NotNullWhen(true)] out ConfEntry? entry) =>
        anyCase.TryGetValue(key, out entry);

    /// <summary>True when <paramref name="key"/> is present, ignoring letter case.</summary>
    public bool ContainsKey(string key) => anyCase.ContainsKey(key);

    /// <summary>Finds an entry by its exact key; <c>$name</c> references resolve this way, case-sensitively.</summary>
    internal bool TryGetExactEntry(string key, [NotNullWhen(true)] out ConfEntry? entry) =>
        exact.TryGetValue(key, out entry);

    /// <summary>Adds an entry, replacing an earlier one with the same exact key.</summary>
    internal void Set(ConfEntry entry)
    {
        if (exact.Remove(entry.Key, out var previous))
        {
            entries.Remove(previous);
        }
        entries.Add(entry);
        exact[entry.Key] = entry;
        anyCase[entry.Key] = entry;
    }

    /// <inheritdoc/>
    internal override ConfValue WithPosition(ConfPosition position) => new ConfMap(this, position);

    /// <inheritdoc/>
    public override string ToString() => "{" + string.Join(", ", entries) + "}";
}
