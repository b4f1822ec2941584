using Broker.Core.Auth;
using Broker.Host.Configuration.Conf;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfValueText;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>
/// An account's <c>jetstream</c> key (nats-server opts.go parseJetStreamForAccount) onto <see
/// cref="AccountJetStreamOptions"/> keys: <c>true</c>, <c>enabled</c>/<c>enable</c> or a block of limits enable it
/// (<c>...:JetStream:Enabled</c>), <c>false</c>, <c>disabled</c>/<c>disable</c> leave it off, with nats-server's texts
/// for any other value and for a limit that is not a size or a bool.
/// </summary>
internal static class AccountJetStreamMapper
{
    /// <summary>Maps one account's <c>jetstream</c> entry under <paramref name="prefix"/>.</summary>
    public static void Map(ConfEntry entry, string prefix, ConfMappingBuilder output)
    {
        var enabled = prefix + ":" + nameof(AccountJetStreamOptions.Enabled);
        switch (entry.Value)
        {
            case ConfBool flag:
                output.Set(enabled, Format(flag.Value));
                break;
            case ConfString text:
                switch (text.Value.ToLowerInvariant())
                {
                    case "enabled" or "enable":
                        output.Set(enabled, "true");
                        break;
                    case "disabled" or "disable":
                        output.Set(enabled, "false");
                        break;
                    default:
                        // nats-server's error token is empty here: the text has no position.
                        output.Error(null, $"Expected 'enabled' or 'disabled' for string value, got '{text.Value}'");
                        break;
                }

                break;
            case ConfMap block:
                // nats-server starts a block from -1 everywhere: a block, even empty, enables JetStream.
                output.Set(enabled, "true");
                Limits(block, prefix, output);
                break;
            default:
                output.Error(null, $"Expected map, bool or string to define JetStream, got {GoType(entry.Value)}");
                break;
        }
    }

    private static void Limits(ConfMap block, string prefix, ConfMappingBuilder output)
    {
        foreach (var item in block.Entries)
        {
            var key = item.Key.ToLowerInvariant();
            var property = key switch
            {
                "max_memory" or "max_mem" or "mem" or "memory" => nameof(AccountJetStreamOptions.MaxMemory),
                "max_store" or "max_file" or "max_disk" or "store" or "disk" => nameof(AccountJetStreamOptions.MaxStorage),
                "max_streams" or "streams" => nameof(AccountJetStreamOptions.MaxStreams),
                "max_consumers" or "consumers" => nameof(AccountJetStreamOptions.MaxConsumers),
                "max_bytes_required" or "max_stream_bytes" or "max_bytes" => nameof(AccountJetStreamOptions.MaxBytesRequired),
                "mem_max_stream_bytes" or "memory_max_stream_bytes" => nameof(AccountJetStreamOptions.MemoryMaxStreamBytes),
                "disk_max_stream_bytes" or "store_max_stream_bytes" => nameof(AccountJetStreamOptions.StorageMaxStreamBytes),
                "max_ack_pending" => nameof(AccountJetStreamOptions.MaxAckPending),
                _ => null,
            };
            if (property is null)
            {
                if (!item.UsedAsVariable)
                {
                    output.Error(item.KeyPosition, $"unknown field \"{item.Key}\"");
                }

                continue;
            }

            var target = prefix + ":" + property;
            if (property == nameof(AccountJetStreamOptions.MaxBytesRequired))
            {
                if (item.Value is ConfBool flag)
                {
                    output.Set(target, Format(flag.Value));
                }
                else
                {
                    output.Error(item.KeyPosition, $"Expected a parseable bool for {GoQuoted(new ConfString(item.Key, item.KeyPosition))}, got {Scalar(item.Value)}");
                }
            }
            else if (item.Value is ConfInteger number)
            {
                // nats-server keeps max_streams, max_consumers and max_ack_pending as Go ints (64-bit): ours are 32-bit,
                // so a larger count means no limit of the account's own.
                var value = property is nameof(AccountJetStreamOptions.MaxStreams) or nameof(AccountJetStreamOptions.MaxConsumers) or nameof(AccountJetStreamOptions.MaxAckPending)
                    ? Math.Clamp(number.Value, int.MinValue, int.MaxValue)
                    : number.Value;
                output.Set(target, Format(value));
            }
            else
            {
                output.Error(item.KeyPosition, $"Expected a parseable size for {GoQuoted(new ConfString(item.Key, item.KeyPosition))}, got {Scalar(item.Value)}");
            }
        }
    }
}
