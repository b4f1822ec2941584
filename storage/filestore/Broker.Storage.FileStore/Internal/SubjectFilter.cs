namespace Broker.Storage.FileStore.Internal;

/// <summary>NATS subject matching on UTF-8 bytes: <c>*</c> matches one token, a final <c>&gt;</c> one or more.</summary>
internal static class SubjectFilter
{
    /// <summary>Whether the filter matches every subject (empty or <c>&gt;</c>).</summary>
    public static bool IsAll(ReadOnlySpan<byte> filter) => filter.IsEmpty || (filter.Length == 1 && filter[0] == (byte)'>');

    /// <summary>Whether the filter has wildcards (a literal filter can use the per-subject index directly).</summary>
    public static bool IsLiteral(ReadOnlySpan<byte> filter)
    {
        for (var i = 0; i < filter.Length; i++)
        {
            var c = filter[i];
            if ((c == (byte)'*' || c == (byte)'>')
                && (i == 0 || filter[i - 1] == (byte)'.')
                && (i == filter.Length - 1 || filter[i + 1] == (byte)'.'))
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>Whether a literal subject matches a filter.</summary>
    public static bool Matches(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> filter)
    {
        if (IsAll(filter))
        {
            return true;
        }

        while (true)
        {
            var fi = filter.IndexOf((byte)'.');
            var ftoken = fi < 0 ? filter : filter[..fi];
            if (ftoken.Length == 1 && ftoken[0] == (byte)'>' && fi < 0)
            {
                return !subject.IsEmpty;
            }

            var si = subject.IndexOf((byte)'.');
            var stoken = si < 0 ? subject : subject[..si];
            if (!(ftoken.Length == 1 && ftoken[0] == (byte)'*') && !ftoken.SequenceEqual(stoken))
            {
                return false;
            }

            if (fi < 0 || si < 0)
            {
                return fi < 0 && si < 0;
            }

            filter = filter[(fi + 1)..];
            subject = subject[(si + 1)..];
        }
    }
}
