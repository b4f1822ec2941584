namespace Broker.Adapters.Mqtt.Internal.Topics;

/// <summary>MQTT topic filter matching (specification section 4.7), used for retained messages.</summary>
internal static class TopicFilter
{
    /// <summary>
    /// Whether <paramref name="topic"/> matches <paramref name="filter"/>: <c>+</c> one level, <c>#</c> any number of
    /// levels including none (<c>a/#</c> matches <c>a</c>), and no wildcard in the first level matches a topic starting
    /// with <c>$</c> (MQTT-4.7.2-1).
    /// </summary>
    public static bool Matches(string filter, string topic)
    {
        if (topic.Length > 0 && topic[0] == '$' && filter.Length > 0 && filter[0] is '+' or '#')
        {
            return false;
        }

        var f = 0;
        var t = 0;
        while (true)
        {
            var fEnd = filter.IndexOf('/', f);
            var fLevel = fEnd < 0 ? filter.AsSpan(f) : filter.AsSpan(f, fEnd - f);
            if (fLevel is "#")
            {
                return true;
            }

            if (t > topic.Length)
            {
                // The topic ended at the previous level: only "parent/#" matches it.
                return false;
            }

            var tEnd = topic.IndexOf('/', t);
            var tLevel = tEnd < 0 ? topic.AsSpan(t) : topic.AsSpan(t, tEnd - t);
            if (fLevel is not "+" && !fLevel.SequenceEqual(tLevel))
            {
                return false;
            }

            if (fEnd < 0 || tEnd < 0)
            {
                if (fEnd < 0 && tEnd < 0)
                {
                    return true;
                }

                // The filter goes on: it matches only if what follows is "#".
                return tEnd < 0 && filter.AsSpan(fEnd + 1) is "#";
            }

            f = fEnd + 1;
            t = tEnd + 1;
        }
    }
}
