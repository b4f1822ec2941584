namespace Broker.Adapters.Mqtt.Internal.Topics;

/// <summary>The outcome of a topic to subject conversion.</summary>
internal enum TopicStatus
{
    Ok,

    /// <summary>Whitespace or DEL, which NATS subjects cannot carry (nats-server refuses them too).</summary>
    UnsupportedCharacter,

    /// <summary>A <c>+</c> or <c>#</c> in a topic name (MQTT-3.3.2-2).</summary>
    WildcardInTopicName,

    /// <summary>A level that maps to a NATS wildcard token (<c>*</c> or <c>&gt;</c>), which a NATS publish cannot use.</summary>
    NatsWildcardInTopicName,
}

/// <summary>
/// MQTT topics and NATS subjects, mapped exactly as nats-server maps them (<c>mqttToNATSSubjectConversion</c> and
/// <c>natsSubjectToMQTTTopic</c> in <c>server/mqtt.go</c>), so MQTT clients of either broker share one subject space:
/// <c>/</c> is <c>.</c>; a <c>.</c> in a topic is <c>//</c>; a leading <c>/</c> is <c>/.</c>; an empty level
/// (<c>a//b</c>) is <c>a./.b</c>; a trailing <c>/</c> is <c>./</c>; <c>+</c> is <c>*</c> and <c>#</c> is <c>&gt;</c>.
/// </summary>
internal static class TopicMapper
{
    private const byte Separator = (byte)'/';
    private const byte NatsSeparator = (byte)'.';

    /// <summary>The largest subject a topic of <paramref name="topicLength"/> bytes can map to.</summary>
    public static int MaxSubjectLength(int topicLength) => (2 * topicLength) + 1;

    /// <summary>Whether the topic maps to itself (no separator, dot, wildcard or refused character): no copy is needed.</summary>
    public static bool IsIdentity(ReadOnlySpan<byte> topic) => topic.IndexOfAny(Special) < 0;

    private static readonly System.Buffers.SearchValues<byte> Special = System.Buffers.SearchValues.Create("/.+# \t\n\r\f\u007f"u8);

    /// <summary>
    /// Converts a topic name (<paramref name="filter"/> false) or a topic filter into a NATS subject written to
    /// <paramref name="destination"/>, which must hold <see cref="MaxSubjectLength"/> bytes.
    /// </summary>
    public static TopicStatus ToSubject(ReadOnlySpan<byte> topic, bool filter, Span<byte> destination, out int written)
    {
        written = 0;
        var end = topic.Length - 1;
        var j = 0;
        for (var i = 0; i < topic.Length; i++)
        {
            var c = topic[i];
            switch (c)
            {
                case Separator:
                    if (i == 0 || destination[j - 1] == NatsSeparator)
                    {
                        destination[j++] = Separator;
                        destination[j++] = NatsSeparator;
                    }
                    else if (i == end || topic[i + 1] == Separator)
                    {
                        destination[j++] = NatsSeparator;
                        destination[j++] = Separator;
                    }
                    else
                    {
                        destination[j++] = NatsSeparator;
                    }

                    break;
                case (byte)' ' or (byte)'\t' or (byte)'\n' or (byte)'\r' or (byte)'\f' or 0x7F:
                    return TopicStatus.UnsupportedCharacter;
                case NatsSeparator:
                    destination[j++] = Separator;
                    destination[j++] = Separator;
                    break;
                case (byte)'+' or (byte)'#':
                    if (!filter)
                    {
                        return TopicStatus.WildcardInTopicName;
                    }

                    destination[j++] = c == (byte)'+' ? (byte)'*' : (byte)'>';
                    break;
                default:
                    destination[j++] = c;
                    break;
            }
        }

        if (j > 0 && destination[j - 1] == NatsSeparator)
        {
            destination[j++] = Separator;
        }

        written = j;
        if (!filter && HasNatsWildcardToken(destination[..j]))
        {
            return TopicStatus.NatsWildcardInTopicName;
        }

        return TopicStatus.Ok;
    }

    /// <summary>Converts a topic filter to a subject string (subscriptions are not on the hot path).</summary>
    public static TopicStatus FilterToSubject(string filter, out string subject)
    {
        var topic = System.Text.Encoding.UTF8.GetBytes(filter);
        var buffer = new byte[MaxSubjectLength(topic.Length)];
        var status = ToSubject(topic, filter: true, buffer, out var written);
        subject = status == TopicStatus.Ok ? System.Text.Encoding.UTF8.GetString(buffer, 0, written) : string.Empty;
        return status;
    }

    /// <summary>The length of the topic <paramref name="subject"/> maps back to.</summary>
    public static int TopicLength(ReadOnlySpan<byte> subject)
    {
        if (subject.IndexOf(Separator) < 0)
        {
            return subject.Length;
        }

        var end = subject.Length - 1;
        var length = 0;
        for (var i = 0; i < subject.Length; i++)
        {
            if (subject[i] == Separator)
            {
                if (i < end && subject[i + 1] is NatsSeparator or Separator)
                {
                    length++;
                    i++;
                }

                continue;
            }

            length++;
        }

        return length;
    }

    /// <summary>Writes the topic <paramref name="subject"/> maps back to; returns its length.</summary>
    public static int ToTopic(ReadOnlySpan<byte> subject, Span<byte> destination)
    {
        var end = subject.Length - 1;
        var j = 0;
        for (var i = 0; i < subject.Length; i++)
        {
            var c = subject[i];
            if (c == Separator)
            {
                if (i < end)
                {
                    var next = subject[i + 1];
                    if (next == NatsSeparator)
                    {
                        destination[j++] = Separator;
                        i++;
                    }
                    else if (next == Separator)
                    {
                        destination[j++] = NatsSeparator;
                        i++;
                    }
                }
            }
            else
            {
                destination[j++] = c == NatsSeparator ? Separator : c;
            }
        }

        return j;
    }

    /// <summary>
    /// Whether a NATS subscription subject needs a second subscription on its parent, as nats-server makes for
    /// <c>#</c>: <c>foo/#</c> matches <c>foo</c> too, so <c>foo.&gt;</c> is joined by <c>foo</c>.
    /// </summary>
    public static bool NeedsParentSubscription(string subject) => subject.Length >= 3 && subject.EndsWith(".>", StringComparison.Ordinal);

    /// <summary>
    /// Whether a subscription is one the specification keeps away from <c>$</c> topics (MQTT-4.7.2-1): a filter whose
    /// first level is a wildcard (<c>#</c>, <c>+</c>, <c>+/...</c>), as nats-server's <c>isMQTTReservedSubscription</c>.
    /// </summary>
    public static bool IsReservedSubscription(string subject)
        => subject is "*" or ">" || (subject.Length > 1 && subject[0] == '*' && subject[1] == '.');

    /// <summary>Whether a topic filter is well formed (MQTT-4.7.1-2, MQTT-4.7.1-3): wildcards fill whole levels, <c>#</c> is last.</summary>
    public static bool IsValidFilter(ReadOnlySpan<byte> filter)
    {
        if (filter.IsEmpty)
        {
            return false;
        }

        for (var i = 0; i < filter.Length; i++)
        {
            var c = filter[i];
            if (c is not ((byte)'+' or (byte)'#'))
            {
                continue;
            }

            var startsLevel = i == 0 || filter[i - 1] == Separator;
            var endsLevel = i == filter.Length - 1 || filter[i + 1] == Separator;
            if (!startsLevel || !endsLevel || (c == (byte)'#' && i != filter.Length - 1))
            {
                return false;
            }
        }

        return true;
    }

    private static bool HasNatsWildcardToken(ReadOnlySpan<byte> subject)
    {
        var start = 0;
        while (start <= subject.Length)
        {
            var dot = subject[start..].IndexOf(NatsSeparator);
            var token = dot < 0 ? subject[start..] : subject.Slice(start, dot);
            if (token.Length == 1 && token[0] is (byte)'*' or (byte)'>')
            {
                return true;
            }

            if (dot < 0)
            {
                return false;
            }

            start += dot + 1;
        }

        return false;
    }
}
