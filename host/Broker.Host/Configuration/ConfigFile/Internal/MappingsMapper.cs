using System.Globalization;
using Broker.Abstractions;
using Broker.Core.Auth;
using Broker.Host.Configuration.Conf;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfValueText;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>
/// A <c>mappings</c> (or <c>maps</c>) block, top-level or an account's (nats-server opts.go parseAccountMappings,
/// parseAccountMapDest), onto <see cref="MappingOptions"/> keys (<c>...:Mappings:0:Source</c>,
/// <c>...:Destinations:0:Subject</c>, <c>:Weight</c>, <c>:Cluster</c>): a source to one destination subject, to one
/// <c>{dest, weight}</c> map or to a list of them, each checked as nats-server adds it, with its texts and positions
/// (including the Go type-assertion panics it reports for a refused map or list).
/// </summary>
/// <param name="reader">Typed reads of the values.</param>
/// <param name="output">Where values and diagnostics go.</param>
internal sealed class MappingsMapper(ConfValueReader reader, ConfMappingBuilder output)
{
    /// <summary>Whether <paramref name="key"/> (any letter case) is <c>mappings</c> or <c>maps</c>.</summary>
    public static bool Reads(string key)
        => string.Equals(key, "mappings", StringComparison.OrdinalIgnoreCase) || string.Equals(key, "maps", StringComparison.OrdinalIgnoreCase);

    /// <summary>Maps the block of <paramref name="entry"/> under <paramref name="prefix"/> from index <paramref name="start"/>.</summary>
    /// <param name="entry">The <c>mappings</c> entry.</param>
    /// <param name="prefix">The key of the <see cref="MappingOptions"/> list.</param>
    /// <param name="start">The index of the first mapping (an account's second block continues its list, as nats-server adds to the account).</param>
    /// <param name="write">Whether to write the keys (false: only check, for a top-level block a later one replaces).</param>
    /// <returns>How many mappings were written.</returns>
    public int Map(ConfEntry entry, string prefix, int start, bool write)
    {
        if (entry.Value is not ConfMap block)
        {
            // nats-server's type assertion, reported at the key as its panic handler reports it.
            reader.TypeError(entry.KeyPosition, entry.Value, "map[string]interface {}");
            return 0;
        }

        var index = start;
        foreach (var item in block.Entries)
        {
            if (item.UsedAsVariable)
            {
                continue;
            }

            if (!IsValidSubject(item.Key))
            {
                output.Error(entry.KeyPosition, $"Subject \"{item.Key}\" is not a valid subject");
                continue;
            }

            var mapping = Mapping(item);
            if (mapping is not null && write)
            {
                Write(mapping, $"{prefix}:{Format(index++)}");
            }
        }

        return index - start;
    }

    private MappingOptions? Mapping(ConfEntry item)
    {
        var mapping = new MappingOptions { Source = item.Key };
        switch (item.Value)
        {
            case ConfString destination:
                mapping.Destinations.Add(new MappingDestinationOptions { Subject = destination.Value, Weight = 100 });
                if (Check(mapping) is { } reason)
                {
                    output.Error(item.KeyPosition, $"Error adding mapping for \"{item.Key}\" to \"{destination.Value}\" : {reason}");
                    return null;
                }

                return mapping;

            case ConfArray list:
                foreach (var element in list.Items)
                {
                    if (Destination(element, ItemPosition(element)) is { } parsed)
                    {
                        mapping.Destinations.Add(parsed);
                    }
                }

                // nats-server formats this error with a string assertion on the list, which panics: the panic is the text.
                if (Check(mapping) is not null)
                {
                    reader.TypeError(ItemPosition(list.Items[^1]), list, "string");
                    return null;
                }

                return mapping;

            default:
                if (Destination(item.Value, item.KeyPosition) is not { } single)
                {
                    return null;
                }

                mapping.Destinations.Add(single);
                if (Check(mapping) is not null)
                {
                    reader.TypeError(item.KeyPosition, item.Value, "string");
                    return null;
                }

                return mapping;
        }
    }

    // nats-server places a map that is an array's item just after its closing brace.
    private static ConfPosition ItemPosition(ConfValue item)
        => item is ConfMap map ? map.ClosePosition with { Column = map.ClosePosition.Column + 1 } : item.Position;

    // One {dest|destination, weight, cluster} map; errors as parseAccountMapDest reports them.
    private MappingDestinationOptions? Destination(ConfValue value, ConfPosition position)
    {
        if (value is not ConfMap fields)
        {
            output.Error(position, "Expected an entry for the mapping destination");
            return null;
        }

        var destination = new MappingDestinationOptions();
        var weighted = false;
        foreach (var field in fields.Entries)
        {
            switch (field.Key.ToLowerInvariant())
            {
                case "dest" or "destination":
                    if (field.Value is not ConfString subject)
                    {
                        reader.TypeError(position, field.Value, "string");
                        return null;
                    }

                    destination.Subject = subject.Value;
                    break;
                case "weight":
                    if (!TryWeight(field, out var weight))
                    {
                        return null;
                    }

                    destination.Weight = weight;
                    weighted = true;
                    break;
                case "cluster":
                    if (field.Value is not ConfString cluster)
                    {
                        reader.TypeError(position, field.Value, "string");
                        return null;
                    }

                    destination.Cluster = cluster.Value;
                    break;
                default:
                    output.Error(field.KeyPosition, $"Unknown field \"{field.Key}\" for mapping destination");
                    return null;
            }
        }

        if (!weighted)
        {
            output.Error(position, $"Missing weight for mapping destination \"{destination.Subject}\"");
            return null;
        }

        return destination;
    }

    // "40%", "40" or 40; 0 to 100.
    private bool TryWeight(ConfEntry field, out int weight)
    {
        weight = 0;
        long value;
        switch (field.Value)
        {
            case ConfString text:
                var digits = text.Value.EndsWith('%') ? text.Value[..^1] : text.Value;
                if (!long.TryParse(digits, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out value))
                {
                    output.Error(field.KeyPosition, $"Invalid weight \"{digits}\" for mapping destination");
                    return false;
                }

                break;
            case ConfInteger number:
                value = number.Value;
                break;
            default:
                // nats-server adds a line feed to this text, which prints an empty line after it.
                output.Error(field.KeyPosition, $"Unknown entry type for weight of {field.Value}");
                return false;
        }

        if (value is > 100 or < 0)
        {
            output.Error(field.KeyPosition, $"Invalid weight {Format(value)} for mapping destination");
            return false;
        }

        weight = (int)value;
        return true;
    }

    private static string? Check(MappingOptions mapping)
    {
        try
        {
            mapping.Validate();
            return null;
        }
        catch (InvalidOperationException ex)
        {
            return ex.Message;
        }
    }

    private void Write(MappingOptions mapping, string prefix)
    {
        output.Set(prefix + ":" + nameof(MappingOptions.Source), mapping.Source);
        for (var i = 0; i < mapping.Destinations.Count; i++)
        {
            var destination = mapping.Destinations[i];
            var key = $"{prefix}:{nameof(MappingOptions.Destinations)}:{Format(i)}:";
            output.Set(key + nameof(MappingDestinationOptions.Subject), destination.Subject);
            output.Set(key + nameof(MappingDestinationOptions.Weight), Format(destination.Weight));
            if (destination.Cluster is not null)
            {
                output.Set(key + nameof(MappingDestinationOptions.Cluster), destination.Cluster);
            }
        }
    }

    // nats-server's IsValidSubject (Subjects.IsValid on the UTF-8 bytes: no empty token, nothing after '>', no white space).
    private static bool IsValidSubject(string subject) => Subjects.IsValid(System.Text.Encoding.UTF8.GetBytes(subject));
}
