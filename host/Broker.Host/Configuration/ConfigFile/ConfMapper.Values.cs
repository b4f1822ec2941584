using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using Broker.Abstractions;
using Broker.Host.Configuration.Conf;

namespace Broker.Host.Configuration.ConfigFile;

// Typed reads of values, with nats-server's messages when a value has the wrong type or form.
internal sealed partial class ConfMapper
{
    private void SetString(ConfEntry entry, string key)
    {
        if (TryString(entry, out var value))
        {
            Set(key, value);
        }
    }

    private void SetBool(ConfEntry entry, string key)
    {
        if (TryBool(entry, out var value))
        {
            Set(key, Format(value));
        }
    }

    private void SetInt32(ConfEntry entry, string key)
    {
        if (TryInt32(entry, out var value))
        {
            Set(key, Format(value));
        }
    }

    private void SetInt64(ConfEntry entry, string key)
    {
        if (TryInteger(entry, out var value))
        {
            Set(key, Format(value));
        }
    }

    // nats-server's parseDuration: a Go duration string, or (deprecated, with a warning) a number of seconds.
    private void SetDuration(ConfEntry entry, string field, string key)
    {
        if (TryDuration(entry, field, out var value))
        {
            Set(key, Format(value));
        }
    }

    private bool TryDuration(ConfEntry entry, string field, out TimeSpan value)
    {
        switch (entry.Value)
        {
            case ConfString text:
                if (ConfigSyntax.TryParseDuration(text.Value, out value, out var error))
                {
                    return true;
                }

                Error(entry.KeyPosition, $"error parsing {field}: {error}");
                return false;
            case ConfInteger seconds:
                Warning(entry.KeyPosition, $"invalid use of field \"{field}\": {field} should be converted to a duration");
                value = TimeSpan.FromSeconds(seconds.Value);
                return true;
            default:
                TypeError(entry.KeyPosition, entry.Value, "int64");
                value = default;
                return false;
        }
    }

    // nats-server's parseListen: a port alone, or "host:port" split as Go's net.SplitHostPort does. Port -1 is
    // nats-server's "random port", which the settings layer turns into 0.
    private void Listen(ConfEntry entry, string hostKey, string portKey, string? defaultHost)
    {
        switch (entry.Value)
        {
            case ConfInteger port:
                Set(portKey, Format(port.Value));
                return;
            case ConfString text:
                if (!TrySplitHostPort(text.Value, out var host, out var portText))
                {
                    Error(entry.KeyPosition, $"could not parse address string \"{text.Value}\"");
                    return;
                }

                if (!int.TryParse(portText, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var number))
                {
                    Error(entry.KeyPosition, $"could not parse port \"{portText}\"");
                    return;
                }

                if (host.Length > 0 || defaultHost is not null)
                {
                    Set(hostKey, host.Length > 0 ? host : defaultHost);
                }

                Set(portKey, Format(number));
                return;
            default:
                Error(entry.KeyPosition, $"expected port or host:port, got {GoType(entry.Value)}");
                return;
        }
    }

    // Go's net.SplitHostPort: "host:port", "[v6]:port", ":port"; a bare host or an unbracketed IPv6 fails.
    private static bool TrySplitHostPort(string text, out string host, out string port)
    {
        host = port = "";
        var colon = text.LastIndexOf(':');
        if (colon < 0)
        {
            return false;
        }

        if (text.StartsWith('['))
        {
            var close = text.IndexOf(']', StringComparison.Ordinal);
            if (close < 0 || close + 1 != colon)
            {
                return false;
            }

            host = text[1..close];
        }
        else
        {
            host = text[..colon];
            if (host.Contains(':', StringComparison.Ordinal) || host.Contains('[', StringComparison.Ordinal) || host.Contains(']', StringComparison.Ordinal))
            {
                return false;
            }
        }

        port = text[(colon + 1)..];
        return !port.Contains('[', StringComparison.Ordinal) && !port.Contains(']', StringComparison.Ordinal);
    }

    private bool TryString(ConfEntry entry, [NotNullWhen(true)] out string? value)
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

    private bool TryBool(ConfEntry entry, out bool value)
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

    private bool TryInteger(ConfEntry entry, out long value)
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

    // An option that is 32-bit here; nats-server checks the same bound for max_payload and max_control_line.
    private bool TryInt32(ConfEntry entry, out int value)
    {
        value = 0;
        if (!TryInteger(entry, out var number))
        {
            return false;
        }

        if (number is > int.MaxValue or < int.MinValue)
        {
            Error(entry.KeyPosition, $"{entry.Key} value is too big");
            return false;
        }

        value = (int)number;
        return true;
    }

    private bool TryMap(ConfEntry entry, [NotNullWhen(true)] out ConfMap? map)
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

    // What Go panics with when nats-server asserts a value's type, which it reports as the configuration error.
    private void TypeError(ConfPosition position, ConfValue actual, string expected) =>
        Error(position, $"interface conversion: interface {{}} is {GoType(actual)}, not {expected}");

    /// <summary>The Go type nats-server's parser gives a value, as Go prints it in messages.</summary>
    private static string GoType(ConfValue value) => value switch
    {
        ConfString => "string",
        ConfInteger => "int64",
        ConfFloat => "float64",
        ConfBool => "bool",
        ConfMap => "map[string]interface {}",
        ConfArray => "[]interface {}",
        ConfDateTime => "time.Time",
        _ => value.TypeName,
    };

    private static string Format(long value) => value.ToString(CultureInfo.InvariantCulture);

    private static string Format(bool value) => value ? "true" : "false";

    // TimeSpan's invariant form, which the configuration binder reads back exactly.
    private static string Format(TimeSpan value) => value.ToString("c", CultureInfo.InvariantCulture);

    // A scalar as a plugin reads it from configuration: text as is, numbers invariant, booleans true/false.
    private static string FormatScalar(ConfValue value) => value switch
    {
        ConfString text => text.Value,
        ConfInteger number => Format(number.Value),
        ConfFloat number => number.Value.ToString("R", CultureInfo.InvariantCulture),
        ConfBool flag => Format(flag.Value),
        ConfDateTime time => time.Value.ToString("O", CultureInfo.InvariantCulture),
        _ => value.ToString() ?? "",
    };
}
