using System.Text;
using Broker.Abstractions;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Auth;

/// <summary>
/// One compiled allow or deny list: subject patterns, each either plain or restricted to a queue group
/// (<c>"subject queue"</c>). Immutable after construction, so any thread may query it. Literal patterns sit in a
/// hash set (a literal pattern only ever matches the identical subject, wildcard or not); wildcard patterns are
/// scanned, as permission lists are short.
/// </summary>
internal sealed class SubjectPatternSet
{
    private readonly Dictionary<byte[], LiteralEntry> literals;
    private readonly Dictionary<byte[], LiteralEntry>.AlternateLookup<ReadOnlySpan<byte>> literalLookup;
    private readonly Pattern[] wildcards;

    private SubjectPatternSet(Dictionary<byte[], LiteralEntry> literals, Pattern[] wildcards)
    {
        this.literals = literals;
        literalLookup = literals.GetAlternateLookup<ReadOnlySpan<byte>>();
        this.wildcards = wildcards;
    }

    /// <summary>How a pattern is compared with a subject that may itself hold wildcards.</summary>
    public enum Mode
    {
        /// <summary>
        /// The pattern must cover every subject the tested one can match (<see cref="SubjectValidator.Matches"/>): a
        /// <c>*</c> in the pattern does not cover a <c>&gt;</c> in the subject. Allow lists require this as well.
        /// </summary>
        Covers,

        /// <summary>
        /// The subject's tokens are taken literally, so a <c>*</c> in the pattern matches any one token, even
        /// <c>&gt;</c>. This is how nats-server's sublist <c>Match</c> treats a wildcard subject, so its permission rules
        /// are applied in this mode: deny <c>foo.*</c> refuses a subscription to <c>foo.&gt;</c> (verified on
        /// nats-server 2.9.10).
        /// </summary>
        Tokens,
    }

    /// <summary>Whether the set has no entries.</summary>
    public bool IsEmpty => literals.Count == 0 && wildcards.Length == 0;

    /// <summary>Compiles entries of the form <c>subject</c> or <c>subject queue</c> (whitespace separated).</summary>
    /// <exception cref="InvalidOperationException">An entry is malformed, or has a queue where none is allowed.</exception>
    public static SubjectPatternSet Create(IEnumerable<string> entries, bool allowQueue)
    {
        var literals = new Dictionary<byte[], LiteralEntry>(ByteArrayComparer.Instance);
        var wildcards = new List<Pattern>();
        foreach (var entry in entries)
        {
            if (!TryParse(entry, allowQueue, out var subject, out var queue))
            {
                throw new InvalidOperationException($"permissions: \"{entry}\" is not a valid subject");
            }

            if (SubjectValidator.HasWildcard(subject))
            {
                wildcards.Add(new Pattern(subject, queue));
                continue;
            }

            if (!literals.TryGetValue(subject, out var literal))
            {
                literals.Add(subject, literal = new LiteralEntry());
            }

            if (queue is null)
            {
                literal.Plain = true;
            }
            else
            {
                literal.Queues = [.. literal.Queues, queue];
            }
        }

        return new SubjectPatternSet(literals, [.. wildcards]);
    }

    /// <summary>
    /// Splits <c>"subject [queue]"</c> on whitespace as nats-server's <c>splitSubjectQueue</c>, requiring a valid
    /// subject and (when <paramref name="allowQueue"/>) an optional valid queue name; false when malformed.
    /// </summary>
    public static bool TryParse(string entry, bool allowQueue, out byte[] subject, out byte[]? queue)
    {
        subject = [];
        queue = null;
        var fields = entry.Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries);
        if (fields.Length is 0 or > 2 || (fields.Length == 2 && !allowQueue))
        {
            return false;
        }

        subject = Encoding.UTF8.GetBytes(fields[0]);
        queue = fields.Length == 2 ? Encoding.UTF8.GetBytes(fields[1]) : null;
        return SubjectValidator.IsValidSubject(subject) && (queue is null || SubjectValidator.IsValidSubject(queue));
    }

    /// <summary>Whether any entry without a queue group matches <paramref name="subject"/>.</summary>
    public bool MatchesPlain(ReadOnlySpan<byte> subject, Mode mode)
    {
        if (literals.Count > 0 && literalLookup.TryGetValue(subject, out var literal) && literal.Plain)
        {
            return true;
        }

        foreach (var pattern in wildcards)
        {
            if (pattern.Queue is null && Matches(pattern.Subject, subject, mode))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>
    /// Looks at the queue-restricted entries matching <paramref name="subject"/>: whether there are any, and whether
    /// one of them names <paramref name="queue"/> (nats-server <c>queueMatches</c>: equal names, or a wildcard queue
    /// name pattern covering it).
    /// </summary>
    public (bool AnyQueueEntry, bool QueueMatched) MatchQueue(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, Mode mode)
    {
        var any = false;
        if (literals.Count > 0 && literalLookup.TryGetValue(subject, out var literal) && literal.Queues.Length > 0)
        {
            any = true;
            if (AnyQueueMatches(queue, literal.Queues))
            {
                return (true, true);
            }
        }

        foreach (var pattern in wildcards)
        {
            if (pattern.Queue is not null && Matches(pattern.Subject, subject, mode))
            {
                any = true;
                if (QueueMatches(queue, pattern.Queue))
                {
                    return (true, true);
                }
            }
        }

        return (any, false);
    }

    /// <summary>
    /// Whether some literal subject could match both <paramref name="subject"/> and an entry that applies to a
    /// subscription in <paramref name="queue"/> (plain entries always; queue entries when their queue matches).
    /// </summary>
    public bool CollidesWith(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue)
    {
        foreach (var (literal, entry) in literals)
        {
            if ((entry.Plain || AnyQueueMatches(queue, entry.Queues)) && Collide(literal, subject))
            {
                return true;
            }
        }

        foreach (var pattern in wildcards)
        {
            if ((pattern.Queue is null || (!queue.IsEmpty && QueueMatches(queue, pattern.Queue))) && Collide(pattern.Subject, subject))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>nats-server <c>queueMatches</c> for one entry: the same name, or a wildcard name covering it.</summary>
    public static bool QueueMatches(ReadOnlySpan<byte> queue, ReadOnlySpan<byte> entryQueue) =>
        queue.SequenceEqual(entryQueue) || (SubjectValidator.HasWildcard(entryQueue) && SubjectValidator.Matches(entryQueue, queue));

    private static bool AnyQueueMatches(ReadOnlySpan<byte> queue, byte[][] names)
    {
        if (queue.IsEmpty)
        {
            return false;
        }

        foreach (var name in names)
        {
            if (QueueMatches(queue, name))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>Pattern matching in either <see cref="Mode"/>.</summary>
    public static bool Matches(ReadOnlySpan<byte> pattern, ReadOnlySpan<byte> subject, Mode mode) =>
        mode == Mode.Covers ? SubjectValidator.Matches(pattern, subject) : MatchesTokens(pattern, subject);

    /// <summary>Whether two subjects, either or both with wildcards, match at least one common literal subject.</summary>
    public static bool Collide(ReadOnlySpan<byte> a, ReadOnlySpan<byte> b)
    {
        var left = new TokenReader(a);
        var right = new TokenReader(b);
        while (true)
        {
            var hasLeft = left.TryNext(out var l);
            var hasRight = right.TryNext(out var r);
            if (!hasLeft || !hasRight)
            {
                return hasLeft == hasRight;
            }

            if (IsFull(l) || IsFull(r))
            {
                return true;
            }

            if (!IsSingle(l) && !IsSingle(r) && !l.SequenceEqual(r))
            {
                return false;
            }
        }
    }

    private static bool MatchesTokens(ReadOnlySpan<byte> pattern, ReadOnlySpan<byte> subject)
    {
        var patterns = new TokenReader(pattern);
        var subjects = new TokenReader(subject);
        while (true)
        {
            var hasPattern = patterns.TryNext(out var p);
            var hasSubject = subjects.TryNext(out var s);
            if (hasPattern && IsFull(p))
            {
                return hasSubject;
            }

            if (!hasPattern || !hasSubject)
            {
                return hasPattern == hasSubject;
            }

            if (!IsSingle(p) && !p.SequenceEqual(s))
            {
                return false;
            }
        }
    }

    private static bool IsFull(ReadOnlySpan<byte> token) => token.Length == 1 && token[0] == SubjectValidator.FullWildcard;

    private static bool IsSingle(ReadOnlySpan<byte> token) => token.Length == 1 && token[0] == SubjectValidator.SingleWildcard;

    private sealed class LiteralEntry
    {
        public bool Plain;
        public byte[][] Queues = [];
    }

    private sealed record Pattern(byte[] Subject, byte[]? Queue);

    /// <summary>Walks the '.'-separated tokens of a subject without allocating.</summary>
    private ref struct TokenReader(ReadOnlySpan<byte> subject)
    {
        private ReadOnlySpan<byte> rest = subject;
        private bool done = subject.IsEmpty;

        public bool TryNext(out ReadOnlySpan<byte> token)
        {
            if (done)
            {
                token = default;
                return false;
            }

            var dot = rest.IndexOf(SubjectValidator.Separator);
            if (dot < 0)
            {
                token = rest;
                done = true;
                return true;
            }

            token = rest[..dot];
            rest = rest[(dot + 1)..];
            return true;
        }
    }
}
