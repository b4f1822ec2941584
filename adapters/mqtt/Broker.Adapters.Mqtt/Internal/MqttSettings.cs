using System.Globalization;
using Microsoft.Extensions.Configuration;

namespace Broker.Adapters.Mqtt.Internal;

/// <summary>
/// Reads <see cref="MqttOptions"/> from <c>Plugins:Mqtt</c> with nats-server's <c>mqtt { }</c> key names and checks
/// them as nats-server's <c>validateMQTTOptions</c> does; every error names the key.
/// </summary>
/// <remarks>
/// The value syntax (durations, sizes, booleans) moves to the shared reader in Broker.Abstractions once it lands; the
/// private helpers at the end of this file are the only ones to replace.
/// </remarks>
internal static class MqttSettings
{
    private static readonly HashSet<string> Keys = new(StringComparer.OrdinalIgnoreCase)
    {
        "listen", "port", "host", "net", "tls", "no_auth_user", "authorization", "authentication", "ack_wait", "ackwait",
        "max_ack_pending", "max_pending", "max_inflight", "stream_replicas", "consumer_replicas", "consumer_memory_storage",
        "consumer_inactive_threshold", "js_domain", "js_api_timeout", "reject_qos2_publish", "downgrade_qos2_subscribe",
        "max_packet_size", "receive_maximum", "topic_alias_maximum", "server_keep_alive",
    };

    private static readonly HashSet<string> AuthorizationKeys = new(StringComparer.OrdinalIgnoreCase)
    {
        "user", "username", "pass", "password", "token", "timeout",
    };

    /// <exception cref="InvalidOperationException">A key is unknown, or a value is invalid.</exception>
    public static MqttOptions Read(IConfiguration section, string path)
    {
        foreach (var child in section.GetChildren())
        {
            if (!Keys.Contains(child.Key))
            {
                throw new InvalidOperationException($"{path}: unknown field \"{child.Key}\"");
            }
        }

        var options = new MqttOptions
        {
            NoAuthUser = Empty(section["no_auth_user"]),
            RejectQos2Publish = ReadBool(section, "reject_qos2_publish", path),
            DowngradeQos2Subscribe = ReadBool(section, "downgrade_qos2_subscribe", path),
            Tls = section.GetSection("tls").GetChildren().Any(),
        };
        ReadListen(section, path, options);

        var authorization = section.GetSection("authorization").GetChildren().Any()
            ? section.GetSection("authorization")
            : section.GetSection("authentication");
        foreach (var child in authorization.GetChildren())
        {
            if (!AuthorizationKeys.Contains(child.Key))
            {
                throw new InvalidOperationException($"{path}: unknown field \"{child.Key}\" in authorization");
            }
        }

        options.Username = Empty(authorization["username"] ?? authorization["user"]);
        options.Password = Empty(authorization["password"] ?? authorization["pass"]);
        options.Token = Empty(authorization["token"]);
        if (authorization["timeout"] is { } timeout)
        {
            options.ConnectTimeout = Positive(ParseDuration(timeout), path, "authorization timeout");
        }

        if ((section["ack_wait"] ?? section["ackwait"]) is { } ackWait)
        {
            options.AckWait = ParseDuration(ackWait) is { } wait && wait > TimeSpan.Zero
                ? wait
                : throw new InvalidOperationException($"{path}: ack wait must be a positive value");
        }

        options.MaxAckPending = ReadInt(section, "max_ack_pending", path, options.MaxAckPending, 1, ushort.MaxValue);
        options.StreamReplicas = ReadInt(section, "stream_replicas", path, 0, 0, 5);
        options.MaxPacketSize = ReadInt(section, "max_packet_size", path, options.MaxPacketSize, 64, PacketSizeLimit);
        options.ReceiveMaximum = ReadInt(section, "receive_maximum", path, options.ReceiveMaximum, 1, ushort.MaxValue);
        options.TopicAliasMaximum = ReadInt(section, "topic_alias_maximum", path, options.TopicAliasMaximum, 0, ushort.MaxValue);
        if (section["server_keep_alive"] is { } keepAlive)
        {
            var value = Positive(ParseDuration(keepAlive), path, "server_keep_alive");
            options.ServerKeepAlive = value.TotalSeconds <= ushort.MaxValue
                ? value
                : throw new InvalidOperationException($"{path}: server_keep_alive must be at most {ushort.MaxValue} seconds");
        }

        if (options.Token is not null && options.Username is not null)
        {
            throw new InvalidOperationException($"{path}: authorization can have a user name or a token, not both");
        }

        return options;
    }

    // The largest remaining length MQTT can encode, plus its five header bytes.
    private const int PacketSizeLimit = 0x0FFFFFFF + 5;

    private static void ReadListen(IConfiguration section, string path, MqttOptions options)
    {
        if (section["listen"] is { } listen)
        {
            var colon = listen.LastIndexOf(':');
            if (colon < 0 || !int.TryParse(listen[(colon + 1)..], NumberStyles.Integer, CultureInfo.InvariantCulture, out var listenPort))
            {
                throw new InvalidOperationException($"{path}: could not parse listen address \"{listen}\"");
            }

            options.Host = colon == 0 ? options.Host : listen[..colon].Trim('[', ']');
            options.Port = listenPort;
        }

        if ((section["host"] ?? section["net"]) is { } host)
        {
            options.Host = host;
        }

        if (section["port"] is { } port)
        {
            options.Port = int.TryParse(port, NumberStyles.Integer, CultureInfo.InvariantCulture, out var value) && value is >= -1 and <= 65535
                ? value
                : throw new InvalidOperationException($"{path}: port \"{port}\" is not a valid port number");
        }
    }

    private static TimeSpan Positive(TimeSpan? value, string path, string key)
        => value is { } v && v > TimeSpan.Zero ? v : throw new InvalidOperationException($"{path}: {key} must be a positive duration");

    private static int ReadInt(IConfiguration section, string key, string path, int defaultValue, int min, int max)
    {
        if (section[key] is not { } text)
        {
            return defaultValue;
        }

        return ParseSize(text) is { } value && value >= min && value <= max
            ? (int)value
            : throw new InvalidOperationException($"{path}: {key} must be a number from {min} to {max}, got \"{text}\"");
    }

    private static string? Empty(string? value) => string.IsNullOrEmpty(value) ? null : value;

    private static bool ReadBool(IConfiguration section, string key, string path)
    {
        var value = section[key];
        return value is null
            ? false
            : value.Trim().ToLowerInvariant() switch
            {
                "true" or "yes" or "on" => true,
                "false" or "no" or "off" => false,
                _ => throw new InvalidOperationException($"{path}: expected '{key}' to be a boolean"),
            };
    }

    /// <summary>An integer with an optional size suffix (<c>64KB</c>, <c>1MB</c>), as nats-server's configuration parser.</summary>
    private static long? ParseSize(string text)
    {
        text = text.Trim();
        var digits = 0;
        while (digits < text.Length && (char.IsDigit(text[digits]) || (digits == 0 && text[0] == '-')))
        {
            digits++;
        }

        if (!long.TryParse(text[..digits], NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var number))
        {
            return null;
        }

        long? multiplier = text[digits..].Trim().ToLowerInvariant() switch
        {
            "" => 1,
            "k" => 1000,
            "kb" or "ki" or "kib" => 1024,
            "m" => 1000 * 1000,
            "mb" or "mi" or "mib" => 1024 * 1024,
            "g" => 1000 * 1000 * 1000,
            "gb" or "gi" or "gib" => 1024L * 1024 * 1024,
            _ => null,
        };
        return multiplier is { } m ? number * m : null;
    }

    /// <summary>A bare number of seconds (nats-server's integer form) or a Go-style duration: 500ms, 2s, 1m, 1m30s.</summary>
    private static TimeSpan? ParseDuration(string text)
    {
        text = text.Trim();
        if (double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out var seconds))
        {
            return TimeSpan.FromSeconds(seconds);
        }

        var total = TimeSpan.Zero;
        var rest = text.AsSpan();
        while (!rest.IsEmpty)
        {
            var digits = 0;
            while (digits < rest.Length && (char.IsDigit(rest[digits]) || rest[digits] == '.'))
            {
                digits++;
            }

            var unit = digits;
            while (unit < rest.Length && char.IsLetter(rest[unit]))
            {
                unit++;
            }

            if (digits == 0 || !double.TryParse(rest[..digits], NumberStyles.Float, CultureInfo.InvariantCulture, out var value))
            {
                return null;
            }

            double? scale = rest[digits..unit] switch
            {
                "ms" => 1,
                "s" => 1000,
                "m" => 60_000,
                "h" => 3_600_000,
                _ => null,
            };
            if (scale is not { } milliseconds)
            {
                return null;
            }

            total += TimeSpan.FromMilliseconds(value * milliseconds);
            rest = rest[unit..];
        }

        return total;
    }
}
