using Broker.Abstractions;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>
/// Topic aliases the broker assigns towards one MQTT 5 client (up to the client's Topic Alias Maximum): the first
/// topics delivered get an alias each and are sent as an alias alone from then on. Lookups by the subject's bytes
/// allocate nothing; only a topic's first alias assignment copies it.
/// </summary>
internal sealed class OutboundAliases
{
    private readonly Dictionary<byte[], ushort> aliases = new(ByteArrayComparer.Instance);
    private readonly Dictionary<byte[], ushort>.AlternateLookup<ReadOnlySpan<byte>> lookup;
    private readonly ushort maximum;
    private ushort next = 1;

    public OutboundAliases(ushort maximum)
    {
        this.maximum = maximum;
        lookup = aliases.GetAlternateLookup<ReadOnlySpan<byte>>();
    }

    /// <summary>The alias of a subject's topic, assigning one while any are left; 0 when none is.</summary>
    public ushort Get(ReadOnlySpan<byte> subject, out bool isNew)
    {
        if (lookup.TryGetValue(subject, out var alias))
        {
            isNew = false;
            return alias;
        }

        if (next > maximum)
        {
            isNew = false;
            return 0;
        }

        isNew = true;
        alias = next++;
        aliases[subject.ToArray()] = alias;
        return alias;
    }

    /// <summary>Takes back an alias whose first use was not sent.</summary>
    public void Forget(ReadOnlySpan<byte> subject)
    {
        if (lookup.Remove(subject, out _, out var alias) && alias == next - 1)
        {
            next--;
        }
    }
}
