namespace Broker.Abstractions;

/// <summary>
/// nats-server's subject rules (<c>sublist.go</c>) on UTF-8 bytes: tokens separated by <c>.</c>, <c>*</c> matching one
/// token and <c>&gt;</c> one or more trailing tokens. Used by the broker's subject index and permissions and by stores
/// filtering messages, so every part of the broker agrees on what a subject matches.
/// </summary>
public static class Subjects
{
    /// <summary>The token separator, <c>.</c>.</summary>
    public const byte Separator = (byte)'.';

    /// <summary>The single-token wildcard, <c>*</c>.</summary>
    public const byte SingleWildcard = (byte)'*';

    /// <summary>The trailing wildcard, <c>&gt;</c>.</summary>
    public const byte FullWildcard = (byte)'>';

    /// <summary>
    /// A subject that may hold wildcards: non-empty tokens, <c>&gt;</c> only as the last token, no whitespace.
    /// A token that merely contains <c>*</c> or <c>&gt;</c> (e.g. <c>a*</c>) is a literal.
    /// </summary>
    /// <param name="subject">The subject.</param>
    /// <returns>Whether it is valid.</returns>
    public static bool IsValid(ReadOnlySpan<byte> subject)
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

            if (IsFullWildcard(token))
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

    /// <summary>A subject without wildcard tokens and without empty tokens (what a publish may use).</summary>
    /// <param name="subject">The subject.</param>
    /// <returns>Whether it is a valid literal.</returns>
    public static bool IsValidLiteral(ReadOnlySpan<byte> subject)
    {
        if (subject.IsEmpty)
        {
            return false;
        }

        while (true)
        {
            var dot = subject.IndexOf(Separator);
            var token = dot < 0 ? subject : subject[..dot];
            if (token.IsEmpty || IsSingleWildcard(token) || IsFullWildcard(token))
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
    /// <param name="subject">The subject.</param>
    /// <returns>Whether it has a wildcard token.</returns>
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

    /// <summary>Whether a filter matches every subject: empty or <c>&gt;</c>.</summary>
    /// <param name="filter">The filter.</param>
    /// <returns>Whether it matches everything.</returns>
    public static bool IsMatchAll(ReadOnlySpan<byte> filter) => filter.IsEmpty || IsFullWildcard(filter);

    /// <summary>
    /// Whether a literal <paramref name="subject"/> (a published or stored message's) matches <paramref name="filter"/>
    /// the way the subject index matches it (nats-server <c>matchLiteral</c>): tokens of the subject are opaque bytes,
    /// so a <c>*</c> or <c>&gt;</c> token in it is matched by a wildcard of the filter and by no literal token. An empty
    /// filter matches every subject.
    /// </summary>
    /// <param name="filter">The filter, which may hold wildcards.</param>
    /// <param name="subject">The literal subject.</param>
    /// <returns>Whether it matches.</returns>
    public static bool MatchesLiteral(ReadOnlySpan<byte> filter, ReadOnlySpan<byte> subject)
    {
        if (filter.IsEmpty)
        {
            return true;
        }

        if (subject.IsEmpty)
        {
            return false;
        }

        while (true)
        {
            var fdot = filter.IndexOf(Separator);
            var ftoken = fdot < 0 ? filter : filter[..fdot];
            var sdot = subject.IndexOf(Separator);
            var stoken = sdot < 0 ? subject : subject[..sdot];

            // Reached only with a subject token left, so '>' has its one-or-more.
            if (IsFullWildcard(ftoken))
            {
                return true;
            }

            if (!IsSingleWildcard(ftoken) && !ftoken.SequenceEqual(stoken))
            {
                return false;
            }

            if (fdot < 0 || sdot < 0)
            {
                return fdot < 0 && sdot < 0;
            }

            filter = filter[(fdot + 1)..];
            subject = subject[(sdot + 1)..];
        }
    }

    /// <summary>
    /// Whether every subject <paramref name="subject"/> can match is also matched by <paramref name="pattern"/>
    /// (nats-server <c>subjectIsSubsetMatch(subject, pattern)</c>): wildcard tokens of <paramref name="subject"/> are only
    /// covered by the same wildcard (or <c>&gt;</c>) in the pattern. For literal subjects it is plain matching.
    /// </summary>
    /// <param name="pattern">The covering pattern.</param>
    /// <param name="subject">The subject or pattern to cover.</param>
    /// <returns>Whether <paramref name="pattern"/> covers <paramref name="subject"/>.</returns>
    public static bool IsSubsetOf(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> pattern)
    {
        while (true)
        {
            var pdot = pattern.IndexOf(Separator);
            var ptoken = pdot < 0 ? pattern : pattern[..pdot];
            var sdot = subject.IndexOf(Separator);
            var stoken = sdot < 0 ? subject : subject[..sdot];

            if (IsFullWildcard(ptoken))
            {
                return !subject.IsEmpty;
            }

            if (subject.IsEmpty)
            {
                return false;
            }

            var tokenMatches = IsSingleWildcard(ptoken) ? !IsFullWildcard(stoken) : ptoken.SequenceEqual(stoken);
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
    /// Whether some literal subject matches both <paramref name="first"/> and <paramref name="second"/> (nats-server
    /// <c>SubjectsCollide</c>): how stream subjects are checked for overlap.
    /// </summary>
    /// <param name="first">A subject that may hold wildcards.</param>
    /// <param name="second">Another.</param>
    /// <returns>Whether they overlap.</returns>
    public static bool Collide(ReadOnlySpan<byte> first, ReadOnlySpan<byte> second)
    {
        while (true)
        {
            var adot = first.IndexOf(Separator);
            var atoken = adot < 0 ? first : first[..adot];
            var bdot = second.IndexOf(Separator);
            var btoken = bdot < 0 ? second : second[..bdot];

            if (IsFullWildcard(atoken) || IsFullWildcard(btoken))
            {
                return true;
            }

            if (!IsSingleWildcard(atoken) && !IsSingleWildcard(btoken) && !atoken.SequenceEqual(btoken))
            {
                return false;
            }

            if (adot < 0 || bdot < 0)
            {
                return adot < 0 && bdot < 0;
            }

            first = first[(adot + 1)..];
            second = second[(bdot + 1)..];
        }
    }

    /// <summary>Number of tokens in a subject.</summary>
    /// <param name="subject">The subject.</param>
    /// <returns>The token count (0 for an empty subject).</returns>
    public static int CountTokens(ReadOnlySpan<byte> subject) => subject.IsEmpty ? 0 : subject.Count(Separator) + 1;

    private static bool IsSingleWildcard(ReadOnlySpan<byte> token) => token.Length == 1 && token[0] == SingleWildcard;

    private static bool IsFullWildcard(ReadOnlySpan<byte> token) => token.Length == 1 && token[0] == FullWildcard;
}
