using System.Diagnostics.CodeAnalysis;
using Broker.Abstractions;
using Broker.Host.Configuration.Conf;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfValueText;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>
/// Typed reads of entries, with nats-server's messages when a value has the wrong type or form (Go's
/// <c>interface conversion</c> panic that nats-server reports), and the two verdicts on a whole entry: a key nobody
/// reads, a setting the broker refuses. Problems are reported at the entry's key; values read go to the builder.
/// </summary>
/// <param name="output">Where values and diagnostics go.</param>
internal sealed class ConfValueReader(ConfMappingBuilder output)
{
    /// <summary>Sets <paramref name="key"/> to a string value.</summary>
    public void SetString(ConfEntry entry, string key)
    {
        if (TryString(entry, out var value))
        {
            output.Set(key, value);
        }
    }

    /// <summary>Sets <paramref name="key"/> to a boolean value.</summary>
    public void SetBool(ConfEntry entry, string key)
    {
        if (TryBool(entry, out var value))
        {
            output.Set(key, Format(value));
        }
    }

    /// <summary>Sets <paramref name="key"/> to an integer that fits 32 bits.</summary>
    public void SetInt32(ConfEntry entry, string key)
    {
        if (TryInt32(entry, out var value))
        {
            output.Set(key, Format(value));
        }
    }

    /// <summary>Sets <paramref name="key"/> to an integer.</summary>
    public void SetInt64(ConfEntry entry, string key)
    {
        if (TryInteger(entry, out var value))
        {
            output.Set(key, Format(value));
        }
    }

    /// <summary>Sets <paramref name="key"/> to a duration (nats-server's parseDuration, see <see cref="TryDuration"/>).</summary>
    public void SetDuration(ConfEntry entry, string field, string key)
    {
        if (TryDuration(entry, field, out var value))
        {
            output.Set(key, Format(value));
        }
    }

    /// <summary>nats-server's parseDuration: a Go duration string, or (deprecated, with a warning) a number of seconds.</summary>
    /// <param name="entry">The entry.</param>
    /// <param name="field">The field's name in messages.</param>
    /// <param name="value">The duration read.</param>
    public bool TryDuration(ConfEntry entry, string field, out TimeSpan value)
    {
        switch (entry.Value)
        {
            case ConfString text:
                if (ConfigSyntax.TryParseDuration(text.Value, out value, out var error))
                {
                    return true;
                }

                output.Error(entry.KeyPosition, $"error parsing {field}: {error}");
                return false;
            case ConfInteger seconds:
                output.Warning(entry.KeyPosition, $"invalid use of field \"{field}\": {field} should be converted to a duration");
                value = TimeSpan.FromSeconds(seconds.Value);
                return true;
            default:
                TypeError(entry.KeyPosition, entry.Value, "int64");
                value = default;
                return false;
        }
    }

    /// <summary>A string value.</summary>
    public bool TryString(ConfEntry entry, [NotNullWhen(true)] out string? value)
    {
        if (entry.Value is ConfString text)
        {
            value = text.Value;
            return true;
        }

        TypeError(entry.KeyPosition, entry.Value, "string");
        value = null;
        return false;
    }

    /// <summary>A boolean value.</summary>
    public bool TryBool(ConfEntry entry, out bool value)
    {
        if (entry.Value is ConfBool flag)
        {
            value = flag.Value;
            return true;
        }

        TypeError(entry.KeyPosition, entry.Value, "bool");
        value = false;
        return false;
    }

    /// <summary>An integer value.</summary>
    public bool TryInteger(ConfEntry entry, out long value)
    {
        if (entry.Value is ConfInteger number)
        {
            value = number.Value;
            return true;
        }

        TypeError(entry.KeyPosition, entry.Value, "int64");
        value = 0;
        return false;
    }

    /// <summary>An integer for an option that is 32-bit here; nats-server checks the same bound for max_payload and max_control_line.</summary>
    public bool TryInt32(ConfEntry entry, out int value)
    {
        value = 0;
        if (!TryInteger(entry, out var number))
        {
            return false;
        }

        if (number is > int.MaxValue or < int.MinValue)
        {
            output.Error(entry.KeyPosition, $"{entry.Key} value is too big");
            return false;
        }

        value = (int)number;
        return true;
    }

    /// <summary>A map value.</summary>
    public bool TryMap(ConfEntry entry, [NotNullWhen(true)] out ConfMap? map)
    {
        if (entry.Value is ConfMap found)
        {
            map = found;
            return true;
        }

        TypeError(entry.KeyPosition, entry.Value, "map[string]interface {}");
        map = null;
        return false;
    }

    /// <summary>What Go panics with when nats-server asserts a value's type, which it reports as the configuration error.</summary>
    public void TypeError(ConfPosition position, ConfValue actual, string expected) =>
        output.Error(position, $"interface conversion: interface {{}} is {GoType(actual)}, not {expected}");

    /// <summary>nats-server: an unknown key is an error unless it served as a variable.</summary>
    public void Unknown(ConfEntry entry)
    {
        if (!entry.UsedAsVariable)
        {
            output.Error(entry.KeyPosition, $"unknown field \"{entry.Key}\"");
        }
    }

    /// <summary>A security setting the broker cannot enforce: an error naming what is missing.</summary>
    public void Forbidden(ConfEntry entry, string what) =>
        output.Error(entry.KeyPosition, $"\"{entry.Key}\": not supported ({what}); the broker does not run without a security setting it cannot enforce");

    /// <summary>
    /// A setting of a feature the broker does not have yet, which it cannot ignore because messages would be routed
    /// or clients admitted differently than the file says: an error naming the feature.
    /// </summary>
    public void NotYet(ConfEntry entry, string what) =>
        output.Error(entry.KeyPosition, $"\"{entry.Key}\": not supported yet ({what}); ignoring it would route messages or admit clients differently than the file says");
}
