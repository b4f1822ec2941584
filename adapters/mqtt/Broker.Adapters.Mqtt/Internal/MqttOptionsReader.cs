using System.Buffers;
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
internal static class MqttOptionsReader
{
    private static readonly string[] Keys =
    [
        "listen", "port", "host", "net", "tls", "no_auth_user", "authorization", "authentication", "ack_wait", "ackwait",
        "max_ack_pending", "max_pending", "max_inflight", "stream_replicas", "consumer_replicas", "consumer_memory_storage",
        "consumer_inactive_threshold", "consumer_auto_cleanup", "js_domain", "js_api_timeout", "api_timeout",
        "reject_qos2_publish", "downgrade_qos2_subscribe", "max_packet_size", "receive_maximum", "topic_alias_maximum",
        "server_keep_alive", "max_keep_alive",
    ];

    // Characters that would put a domain's API outside one subject token ($JS.<domain>.API.).
    private static readonly SearchValues<char> DomainBreakers = SearchValues.Create(".*> \t\r\n");

    private static readonly string[] AuthorizationKeys = ["user", "username", "pass", "password", "token", "timeout", "account"];

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
        options.Account = Empty(authorization["account"]);
        if (authorization.GetDuration("timeout") is { } timeout)
        {
            options.ConnectTimeout = timeout > TimeSpan.Zero ? timeout : throw authorization.Refuse("timeout", "must be a positive duration");
        }

        if ((section.GetDuration("ack_wait") ?? section.GetDuration("ackwait")) is { } ackWait)
        {
            options.AckWait = ackWait > TimeSpan.Zero ? ackWait : throw section.Refuse("ack_wait", "ack wait must be a positive value");
        }

        // nats-server takes 0 as "the default", 1024.
        var maxAckPendingKey = OneOf(section, "max_ack_pending", "max_pending", "max_inflight");
        if (Range(section, maxAckPendingKey, 0, 0, ushort.MaxValue) is > 0 and var maxAckPending)
        {
            options.MaxAckPending = (int)maxAckPending;
        }

        ReadJetStream(section, options);
        options.MaxPacketSize = (int)Range(section, "max_packet_size", options.MaxPacketSize, 64, Math.Min(PacketSizeLimit, int.MaxValue));
        options.ReceiveMaximum = (int)Range(section, "receive_maximum", options.ReceiveMaximum, 1, ushort.MaxValue);
        options.TopicAliasMaximum = (int)Range(section, "topic_alias_maximum", options.TopicAliasMaximum, 0, ushort.MaxValue);
        if (section.GetDuration("server_keep_alive") is { } keepAlive)
        {
            options.ServerKeepAlive = keepAlive > TimeSpan.Zero && keepAlive.TotalSeconds <= ushort.MaxValue
                ? keepAlive
                : throw section.Refuse("server_keep_alive", $"must be a positive duration of at most {ushort.MaxValue} seconds");
        }

        if (section.GetDuration("max_keep_alive") is { } maxKeepAlive)
        {
            options.MaxKeepAlive = maxKeepAlive > TimeSpan.Zero && maxKeepAlive.TotalSeconds <= ushort.MaxValue
                ? maxKeepAlive
                : throw section.Refuse("max_keep_alive", $"must be a positive duration of at most {ushort.MaxValue} seconds");
            if (options.ServerKeepAlive is not null)
            {
                throw section.Refuse("max_keep_alive", "server_keep_alive imposes the keep alive already: give one of them");
            }
        }

        if (options.Token is not null && options.Username is not null)
        {
            throw authorization.Refuse("token", "authorization can have a user name or a token, not both");
        }

        if (options.Account is not null && options.Token is null && options.Username is null)
        {
            throw authorization.Refuse("account", "names the account of the clients this block admits, so it needs a user name or a token");
        }

        return options;
    }

    /// <summary>The keys that say where and how the adapter keeps its state on JetStream.</summary>
    private static void ReadJetStream(IConfiguration section, MqttOptions options)
    {
        // A single server's streams and consumers have one replica. nats-server 2.9 on a single server accepts more and
        // then fails at the first use (every CONNECT for streams, every QoS 1 or 2 SUBSCRIBE for consumers, with
        // "replicas > 1 not supported in non-clustered mode"); refusing at start says so before any client sees it.
        // 0 or less is nats-server's "as many as the cluster has", 1 here.
        CheckSingleReplica(section, "stream_replicas", "every MQTT connection");
        CheckSingleReplica(section, "consumer_replicas", "every QoS 1 and 2 subscription");

        options.ConsumerMemoryStorage = section.GetBool("consumer_memory_storage", false);
        var thresholdKey = OneOf(section, "consumer_inactive_threshold", "consumer_auto_cleanup");
        if (section.GetDuration(thresholdKey) is { } threshold)
        {
            // nats-server drops a negative value without a word; 0 is "none" there and here.
            options.ConsumerInactiveThreshold = threshold > TimeSpan.Zero ? threshold
                : threshold == TimeSpan.Zero ? null
                : throw section.Refuse(thresholdKey, "must be a positive duration, or 0 for none");
        }

        if (Empty(section["js_domain"]) is { } domain)
        {
            // nats-server 2.9 takes any text and builds subjects nobody can serve from a bad one.
            options.JetStreamDomain = domain.AsSpan().IndexOfAny(DomainBreakers) < 0
                ? domain
                : throw section.Refuse("js_domain", $"invalid domain name \"{domain}\": may not contain ., *, > or white space");
        }

        var timeoutKey = OneOf(section, "js_api_timeout", "api_timeout");
        if (section.GetDuration(timeoutKey) is { } apiTimeout && apiTimeout != TimeSpan.Zero)
        {
            // nats-server (2.11.3 and later): 0 is the default, a negative value its error.
            options.JetStreamApiTimeout = apiTimeout > TimeSpan.Zero ? apiTimeout : throw section.Refuse(timeoutKey, "JS API timeout must be a positive value");
        }
    }

    private static void CheckSingleReplica(IConfiguration section, string key, string refused)
    {
        if (section.GetSize(key) is > 1 and var replicas)
        {
            throw section.Refuse(
                key,
                $"{replicas} replicas need a JetStream cluster, and this broker is a single server whose streams and consumers have 1 "
                + $"(nats-server on a single server refuses {refused} then: \"replicas > 1 not supported in non-clustered mode\"); use 1, or leave it out");
        }
    }

    /// <summary>
    /// The key of a setting that has aliases: the one given, or the first when none is. Giving two is refused: nats-server
    /// takes whichever its map yields last, which is not the order of the file.
    /// </summary>
    private static string OneOf(IConfiguration section, params string[] keys)
    {
        var given = keys.Where(key => !string.IsNullOrEmpty(section[key])).ToArray();
        return given.Length <= 1
            ? given.FirstOrDefault() ?? keys[0]
            : throw section.Refuse(given[1], $"{string.Join(", ", given)} are one setting; give one of them");
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
