namespace Broker.Core.Internal.Subscriptions;

/// <summary>Subject rules of nats-server (<c>sublist.go</c>): tokens split on '.', <c>*</c> and <c>&gt;</c> wildcards.</summary>
internal static class SubjectValidator
{
    public const byte Separator = (byte)'.';
    public const byte SingleWildcard = (byte)'*';
    public const byte FullWildcard = (byte)'>';

    /// <summary>
    /// A subject that may hold wildcards: non-empty tokens, <c>&gt;</c> only as the last token, no whitespace.
    /// A token that merely contains <c>*</c> or <c>&gt;</c> (e.g. <c>a*</c>) is a literal.
    /// </summary>
    public static bool IsValidSubject(ReadOnlySpan<byte> subject)
    {
        if (subject.IsEmpty)
        {
            return false;
        }

        var sawFullWildcard = false;
        while (true)
        {
            var dot = subject.IndexOf(Separator);
            var token = dot < 0 ? subject : subject[..dot];
            if (token.IsEmpty || sawFullWildcard || token.IndexOfAny(" \t\n\r\f"u8) >= 0)
            {
                return false;
            }

            if (token.Length == 1 && token[0] == FullWildcard)
            {
                sawFullWildcard = true;
            }

            if (dot < 0)
            {
                return true;
            }

            subject = subject[(dot + 1)..];
        }
    }

    /// <summary>A subject without wildcard tokens and without empty tokens (what pedantic publishers must use).</summary>
    public static bool IsValidLiteralSubject(ReadOnlySpan<byte> subject)
    {
        if (subject.IsEmpty)
        {
            return false;
        }

        while (true)
        {
            var dot = subject.IndexOf(Separator);
            var token = dot < 0 ? subject : subject[..dot];
            if (token.IsEmpty || (token.Length == 1 && (token[0] == SingleWildcard || token[0] == FullWildcard)))
            {
                return false;
            }

            if (dot < 0)
            {
                return true;
            }

            subject = subject[(dot + 1)..];
        }
    }

    /// <summary>Whether a subject holds a <c>*</c> or <c>&gt;</c> token.</summary>
    public static bool HasWildcard(ReadOnlySpan<byte> subject)
    {
        var index = subject.IndexOfAny(SingleWildcard, FullWildcard);
        while (index >= 0)
        {
            var startsToken = index == 0 || subject[index - 1] == Separator;
            var endsToken = index == subject.Length - 1 || subject[index + 1] == Separator;
            if (startsToken && endsToken)
            {
                return true;
            }

            var next = subject[(index + 1)..].IndexOfAny(SingleWildcard, FullWildcard);
            index = next < 0 ? -1 : index + 1 + next;
        }

        return false;
    }

    /// <summary>
    /// Whether <paramref name="subject"/> matches <paramref name="pattern"/>. Wildcard tokens in
    /// <paramref name="subject"/> are only matched by the same wildcard (or <c>&gt;</c>) in the pattern, so this also
    /// answers whether a wildcard subscription is covered by a pattern (as permission checks need).
    /// </summary>
    public static bool Matches(ReadOnlySpan<byte> pattern, ReadOnlySpan<byte> subject)
    {
        while (true)
        {
            var pdot = pattern.IndexOf(Separator);
            var ptoken = pdot < 0 ? pattern : pattern[..pdot];
            var sdot = subject.IndexOf(Separator);
            var stoken = sdot < 0 ? subject : subject[..sdot];

            if (ptoken.Length == 1 && ptoken[0] == FullWildcard)
            {
                return !subject.IsEmpty;
            }

            if (subject.IsEmpty)
            {
                return false;
            }

            var tokenMatches = ptoken.Length == 1 && ptoken[0] == SingleWildcard
                ? !(stoken.Length == 1 && stoken[0] == FullWildcard)
                : ptoken.SequenceEqual(stoken);
            if (!tokenMatches)
            {
                return false;
            }

            if (pdot < 0 || sdot < 0)
            {
                return pdot < 0 && sdot < 0;
            }

            pattern = pattern[(pdot + 1)..];
            subject = subject[(sdot + 1)..];
        }
    }

    /// <summary>
    /// Whether a subscription <paramref name="pattern"/> matches a <paramref name="published"/> subject the way the
    /// subject index matches it: tokens of the published subject are opaque bytes, so a <c>*</c> or <c>&gt;</c> token
    /// in it is matched by a <c>*</c> or <c>&gt;</c> of the pattern and by no literal token (nats-server
    /// <c>matchLiteral</c>). Unlike <see cref="Matches"/>, a pattern <c>*</c> matches a published <c>&gt;</c> token.
    /// </summary>
    public static bool MatchesPublished(ReadOnlySpan<byte> pattern, ReadOnlySpan<byte> published)
    {
        if (published.IsEmpty)
        {
            return false;
        }

        while (true)
        {
            var pdot = pattern.IndexOf(Separator);
            var ptoken = pdot < 0 ? pattern : pattern[..pdot];
            var sdot = published.IndexOf(Separator);
            var stoken = sdot < 0 ? published : published[..sdot];

            // Reached only with a published token left, so '>' has its one-or-more.
            if (ptoken.Length == 1 && ptoken[0] == FullWildcard)
            {
                return true;
            }

            if (!(ptoken.Length == 1 && ptoken[0] == SingleWildcard) && !ptoken.SequenceEqual(stoken))
            {
                return false;
            }

            if (pdot < 0 || sdot < 0)
            {
                return pdot < 0 && sdot < 0;
            }

            pattern = pattern[(pdot + 1)..];
            published = published[(sdot + 1)..];
        }
    }

    /// <summary>Number of tokens in a subject.</summary>
    public static int CountTokens(ReadOnlySpan<byte> subject) => subject.IsEmpty ? 0 : subject.Count(Separator) + 1;
}
