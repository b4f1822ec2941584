using Broker.Abstractions;

namespace Broker.Core.Internal.Subscriptions;

/// <summary>Subject rules of nats-server (<c>sublist.go</c>): tokens split on '.', <c>*</c> and <c>&gt;</c> wildcards.</summary>
internal static class SubjectValidator
{
    public const byte Separator = (byte)'.';
    public const byte SingleWildcard = (byte)'*';
    public const byte FullWildcard = (byte)'>';

    /// <summary>A subject that may hold wildcards (see <see cref="Subjects.IsValid"/>).</summary>
    public static bool IsValidSubject(ReadOnlySpan<byte> subject) => Subjects.IsValid(subject);

    /// <summary>A subject without wildcard tokens and without empty tokens (what pedantic publishers must use).</summary>
    public static bool IsValidLiteralSubject(ReadOnlySpan<byte> subject) => Subjects.IsValidLiteral(subject);

    /// <summary>Whether a subject holds a <c>*</c> or <c>&gt;</c> token.</summary>
    public static bool HasWildcard(ReadOnlySpan<byte> subject) => Subjects.HasWildcard(subject);

    /// <summary>
    /// Whether <paramref name="subject"/> matches <paramref name="pattern"/>. Wildcard tokens in
    /// <paramref name="subject"/> are only matched by the same wildcard (or <c>&gt;</c>) in the pattern, so this also
    /// answers whether a wildcard subscription is covered by a pattern (as permission checks need).
    /// </summary>
    public static bool Matches(ReadOnlySpan<byte> pattern, ReadOnlySpan<byte> subject) => Subjects.IsSubsetOf(subject, pattern);

    /// <summary>
    /// Whether a subscription <paramref name="pattern"/> matches a <paramref name="published"/> subject the way the
    /// subject index matches it (see <see cref="Subjects.MatchesLiteral"/>).
    /// </summary>
    public static bool MatchesPublished(ReadOnlySpan<byte> pattern, ReadOnlySpan<byte> published) => Subjects.MatchesLiteral(pattern, published);

    /// <summary>Number of tokens in a subject.</summary>
    public static int CountTokens(ReadOnlySpan<byte> subject) => subject.IsEmpty ? 0 : subject.Count(Separator) + 1;
}
