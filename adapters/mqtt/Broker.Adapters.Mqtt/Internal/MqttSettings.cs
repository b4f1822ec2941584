using System.Globalization;
using Broker.Abstractions;
using Microsoft.Extensions.Configuration;

namespace Broker.Adapters.Mqtt.Internal;

/// <summary>
/// Reads <see cref="MqttOptions"/> from <c>Plugins:Mqtt</c> (the <c>mqtt { }</c> block of a configuration file) with
/// nats-server's key names through the contract's shared reader (<see cref="ConfigurationValues"/>), and checks them as
/// nats-server's <c>validateMQTTOptions</c> does; every error is a <see cref="PluginConfigurationException"/> naming
/// the key.
/// </summary>
internal static class MqttSettings
{
    private static readonly string[] Keys =
    [
        "listen", "port", "host", "net", "tls", "no_auth_user", "authorization", "authentication", "ack_wait", "ackwait",
        "max_ack_pending", "max_pending", "max_inflight", "stream_replicas", "consumer_replicas", "consumer_memory_storage",
        "consumer_inactive_threshold", "js_domain", "js_api_timeout", "reject_qos2_publish", "downgrade_qos2_subscribe",
        "max_packet_size", "receive_maximum", "topic_alias_maximum", "server_keep_alive",
    ];

    private static readonly string[] AuthorizationKeys = ["user", "username", "pass", "password", "token", "timeout"];

    // The largest remaining length MQTT can encode, plus its five header bytes.
    private const long PacketSizeLimit = 0x0FFFFFFF + 5;

    /// <exception cref="PluginConfigurationException">A key is unknown, or a value is invalid.</exception>
    public static MqttOptions Read(IConfiguration section)
    {
        section.RejectUnknownKeys(Keys);
        var options = new MqttOptions
        {
            NoAuthUser = Empty(section["no_auth_user"]),
            RejectQos2Publish = section.GetBool("reject_qos2_publish", false),
            DowngradeQos2Subscribe = section.GetBool("downgrade_qos2_subscribe", false),
            Tls = section.GetSection("tls").GetChildren().Any(),
        };
        ReadEndPoint(section, options);

        var authorization = section.GetSection("authorization").GetChildren().Any()
            ? section.GetSection("authorization")
            : section.GetSection("authentication");
        authorization.RejectUnknownKeys(AuthorizationKeys);
        options.Username = Empty(authorization["username"] ?? authorization["user"]);
        options.Password = Empty(authorization["password"] ?? authorization["pass"]);
        options.Token = Empty(authorization["token"]);
        if (authorization.GetDuration("timeout") is { } timeout)
        {
            options.ConnectTimeout = timeout > TimeSpan.Zero ? timeout : throw authorization.Refuse("timeout", "must be a positive duration");
        }

        if ((section.GetDuration("ack_wait") ?? section.GetDuration("ackwait")) is { } ackWait)
        {
            options.AckWait = ackWait > TimeSpan.Zero ? ackWait : throw section.Refuse("ack_wait", "ack wait must be a positive value");
        }

        options.MaxAckPending = (int)Range(section, "max_ack_pending", options.MaxAckPending, 1, ushort.MaxValue);
        options.StreamReplicas = (int)Range(section, "stream_replicas", 0, 0, 5);
        options.MaxPacketSize = (int)Range(section, "max_packet_size", options.MaxPacketSize, 64, Math.Min(PacketSizeLimit, int.MaxValue));
        options.ReceiveMaximum = (int)Range(section, "receive_maximum", options.ReceiveMaximum, 1, ushort.MaxValue);
        options.TopicAliasMaximum = (int)Range(section, "topic_alias_maximum", options.TopicAliasMaximum, 0, ushort.MaxValue);
        if (section.GetDuration("server_keep_alive") is { } keepAlive)
        {
            options.ServerKeepAlive = keepAlive > TimeSpan.Zero && keepAlive.TotalSeconds <= ushort.MaxValue
                ? keepAlive
                : throw section.Refuse("server_keep_alive", $"must be a positive duration of at most {ushort.MaxValue} seconds");
        }

        if (options.Token is not null && options.Username is not null)
        {
            throw authorization.Refuse("token", "authorization can have a user name or a token, not both");
        }

        return options;
    }

    private static void ReadEndPoint(IConfiguration section, MqttOptions options)
    {
        var host = options.Host;
        var port = options.Port;
        section.GetListenEndPoint(ref host, ref port);
        options.Host = host;
        options.Port = port;
    }

    private static long Range(IConfiguration section, string key, long defaultValue, long min, long max)
    {
        var value = section.GetSize(key, defaultValue);
        return value >= min && value <= max ? value : throw section.Refuse(key, $"must be a number from {min} to {max}, got {value}");
    }

    private static string? Empty(string? value) => string.IsNullOrEmpty(value) ? null : value;
}
