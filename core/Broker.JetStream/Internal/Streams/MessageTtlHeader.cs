using System.Text;
using Broker.Abstractions;

namespace Broker.JetStream.Internal.Streams;

/// <summary>
/// nats-server 2.11's <c>Nats-TTL</c> header (<c>getMessageTTL</c>, <c>parseMessageTTL</c>; ADR-43): a message's own
/// time to live, in whole seconds, as a number of seconds or a Go duration of at least a second (<c>"30"</c>,
/// <c>"1h"</c>, <c>"1.5s"</c> is one second), or <c>never</c> (any case), which also spares it from <c>max_age</c>.
/// Anything else is invalid, as are <c>"0"</c> and durations under a second; an empty value is no time to live.
/// </summary>
internal static class MessageTtlHeader
{
    public static ReadOnlySpan<byte> Name => "Nats-TTL"u8;

    /// <summary>
    /// Reads a header value: <see cref="TimeSpan.Zero"/> for none, <see cref="Timeout.InfiniteTimeSpan"/> for never,
    /// whole seconds otherwise; false when invalid (nats-server <c>JSMessageTTLInvalidErr</c>).
    /// </summary>
    public static bool TryParse(ReadOnlySpan<byte> value, out TimeSpan ttl)
    {
        ttl = TimeSpan.Zero;
        if (value.IsEmpty)
        {
            return true;
        }

        if (Ascii.EqualsIgnoreCase(value, "never"u8))
        {
            ttl = Timeout.InfiniteTimeSpan;
            return true;
        }

        if (ConfigSyntax.TryParseNanoseconds(Encoding.UTF8.GetString(value), out var nanoseconds, out _))
        {
            if (nanoseconds < 1_000_000_000)
            {
                return false;
            }

            ttl = TimeSpan.FromSeconds(nanoseconds / 1_000_000_000);
            return true;
        }

        // nats-server's parseInt64: digits only (at most 19 of them), else -1, which is invalid; "00" is 0, no TTL.
        if (value.Length > 19)
        {
            return false;
        }

        long seconds = 0;
        foreach (var digit in value)
        {
            if (digit is < (byte)'0' or > (byte)'9')
            {
                return false;
            }

            seconds = (seconds * 10) + (digit - '0');
        }

        ttl = seconds > (long)TimeSpan.MaxValue.TotalSeconds ? TimeSpan.MaxValue : TimeSpan.FromSeconds(seconds);
        return true;
    }
}
