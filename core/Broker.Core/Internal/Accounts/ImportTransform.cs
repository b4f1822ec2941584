using System.Globalization;
using System.Text;

namespace Broker.Core.Internal.Accounts;

/// <summary>
/// Rewrites a subject matching a pattern with wildcards into a destination that reuses its wildcard tokens, as a
/// stream import's <c>to</c> (or prefix) does (nats-server's <c>transform</c> for imports: a <c>*</c> of the destination
/// takes the source's wildcards in order, <c>$N</c> and <c>{{wildcard(N)}}</c> the Nth, <c>&gt;</c> the rest). Applying
/// it to a published subject writes into a caller's buffer and allocates nothing.
/// </summary>
internal sealed class ImportTransform
{
    // Destination token kinds: a literal, a reference to a source wildcard, or the source's trailing '>'.
    private const int Literal = -1;
    private const int Rest = -2;

    private readonly int[] sourceWildcards; // token index in the source of each '*', in order
    private readonly int restIndex; // token index of the source's '>', or -1
    private readonly int[] kinds; // per destination token: Literal, Rest or the wildcard number
    private readonly byte[][] literals; // per destination token, its bytes when Literal

    private readonly byte[][] sourceLiterals; // the source's tokens, for Reverse

    private ImportTransform(int[] sourceWildcards, int restIndex, int[] kinds, byte[][] literals, byte[][] sourceLiterals)
    {
        this.sourceLiterals = sourceLiterals;
        this.sourceWildcards = sourceWildcards;
        this.restIndex = restIndex;
        this.kinds = kinds;
        this.literals = literals;
    }

    /// <summary>Builds the transform of <paramref name="source"/> into <paramref name="destination"/>.</summary>
    /// <exception cref="InvalidOperationException">The destination uses a wildcard the source lacks, or a function not supported.</exception>
    public static ImportTransform Create(string source, string destination)
    {
        var sourceTokens = source.Split('.');
        var wildcards = new List<int>();
        var rest = -1;
        for (var i = 0; i < sourceTokens.Length; i++)
        {
            if (sourceTokens[i] == "*")
            {
                wildcards.Add(i);
            }
            else if (sourceTokens[i] == ">")
            {
                rest = i;
            }
        }

        var destinationTokens = destination.Split('.');
        var kinds = new int[destinationTokens.Length];
        var literals = new byte[destinationTokens.Length][];
        var next = 0;
        for (var i = 0; i < destinationTokens.Length; i++)
        {
            var token = destinationTokens[i];
            int kind;
            if (token == "*")
            {
                kind = next++;
            }
            else if (token == ">")
            {
                kind = rest >= 0 ? Rest : throw new InvalidOperationException("invalid mapping destination: no matching '>' in the source");
            }
            else if (TryReference(token, out var number))
            {
                kind = number - 1;
            }
            else if (token.StartsWith("{{", StringComparison.Ordinal))
            {
                throw new InvalidOperationException($"mapping function {token} is not supported in imports yet");
            }
            else
            {
                kind = Literal;
                literals[i] = Encoding.UTF8.GetBytes(token);
            }

            if (kind >= wildcards.Count || (kind < 0 && kind != Literal && kind != Rest))
            {
                throw new InvalidOperationException("invalid mapping destination: wildcard index out of range");
            }

            kinds[i] = kind;
        }

        return new ImportTransform([.. wildcards], rest, kinds, literals, [.. sourceTokens.Select(Encoding.UTF8.GetBytes)]);
    }

    /// <summary>
    /// The transform back from the destination to the source (nats-server's <c>reverse</c>): a subscription on a
    /// subject under the destination is made on the source subjects it stands for.
    /// </summary>
    public ImportTransform Reverse()
    {
        // The new source is the destination with each reference made a '*'; the new destination is the old source,
        // each of its wildcards taking the token of the new source that referred to it (or staying '*').
        var newWildcards = new List<int>();
        var byOldWildcard = new Dictionary<int, int>();
        var newRest = -1;
        for (var i = 0; i < kinds.Length; i++)
        {
            if (kinds[i] >= 0)
            {
                byOldWildcard.TryAdd(kinds[i], newWildcards.Count);
                newWildcards.Add(i);
            }
            else if (kinds[i] == Rest)
            {
                newRest = i;
            }
        }

        var sourceLength = sourceLiterals.Length;
        var newKinds = new int[sourceLength];
        var newLiterals = new byte[sourceLength][];
        for (var i = 0; i < sourceLength; i++)
        {
            var wildcard = Array.IndexOf(sourceWildcards, i);
            if (i == restIndex)
            {
                newKinds[i] = newRest >= 0 ? Rest : Literal;
                newLiterals[i] = ">"u8.ToArray();
            }
            else if (wildcard >= 0 && byOldWildcard.TryGetValue(wildcard, out var reference))
            {
                newKinds[i] = reference;
            }
            else
            {
                newKinds[i] = Literal;
                newLiterals[i] = wildcard >= 0 ? "*"u8.ToArray() : sourceLiterals[i];
            }
        }

        var newSource = new byte[kinds.Length][];
        for (var i = 0; i < kinds.Length; i++)
        {
            newSource[i] = kinds[i] == Literal ? literals[i] : kinds[i] == Rest ? ">"u8.ToArray() : "*"u8.ToArray();
        }

        return new ImportTransform([.. newWildcards], newRest, newKinds, newLiterals, newSource);
    }

    /// <summary>Transforms a subject (for subscriptions; may hold wildcards itself) into a new string.</summary>
    public string Apply(string subject)
    {
        var buffer = Array.Empty<byte>();
        var length = Apply(Encoding.UTF8.GetBytes(subject), ref buffer);
        return Encoding.UTF8.GetString(buffer, 0, length);
    }

    /// <summary>
    /// Writes the transform of <paramref name="subject"/>, which matches the source, into <paramref name="buffer"/>
    /// (grown when too small) and returns its length.
    /// </summary>
    public int Apply(ReadOnlySpan<byte> subject, ref byte[] buffer)
    {
        Span<int> starts = stackalloc int[33];
        var count = 0;
        starts[count++] = 0;
        for (var i = 0; i < subject.Length && count < starts.Length - 1; i++)
        {
            if (subject[i] == (byte)'.')
            {
                starts[count++] = i + 1;
            }
        }

        if (count == starts.Length - 1 && subject[(starts[count - 1])..].Contains((byte)'.'))
        {
            return ApplyLong(subject, ref buffer);
        }

        starts[count] = subject.Length + 1;
        var needed = kinds.Length * (subject.Length + 1);
        foreach (var literal in literals)
        {
            needed += literal?.Length + 1 ?? 0;
        }

        if (buffer.Length < needed)
        {
            buffer = new byte[Math.Max(needed, 64)];
        }

        var written = 0;
        for (var i = 0; i < kinds.Length; i++)
        {
            if (i > 0)
            {
                buffer[written++] = (byte)'.';
            }

            ReadOnlySpan<byte> token;
            var kind = kinds[i];
            if (kind == Literal)
            {
                token = literals[i];
            }
            else if (kind == Rest)
            {
                token = restIndex < count ? subject[starts[restIndex]..] : default;
            }
            else
            {
                var index = sourceWildcards[kind];
                token = index < count ? subject[starts[index]..(starts[index + 1] - 1)] : default;
            }

            token.CopyTo(buffer.AsSpan(written));
            written += token.Length;
        }

        return written;
    }

    // More than 32 tokens: rare, so it may allocate.
    private int ApplyLong(ReadOnlySpan<byte> subject, ref byte[] buffer)
    {
        var tokens = Encoding.UTF8.GetString(subject).Split('.');
        var builder = new StringBuilder();
        for (var i = 0; i < kinds.Length; i++)
        {
            if (i > 0)
            {
                builder.Append('.');
            }

            var kind = kinds[i];
            builder.Append(kind switch
            {
                Literal => Encoding.UTF8.GetString(literals[i]),
                Rest => string.Join('.', tokens.Skip(restIndex)),
                _ => tokens[sourceWildcards[kind]],
            });
        }

        var bytes = Encoding.UTF8.GetBytes(builder.ToString());
        if (buffer.Length < bytes.Length)
        {
            buffer = new byte[bytes.Length];
        }

        bytes.CopyTo(buffer, 0);
        return bytes.Length;
    }

    private static bool TryReference(string token, out int number)
    {
        number = 0;
        if (token.Length > 1 && token[0] == '$')
        {
            return int.TryParse(token.AsSpan(1), NumberStyles.None, CultureInfo.InvariantCulture, out number) && number > 0;
        }

        var trimmed = token.Replace(" ", "", StringComparison.Ordinal);
        if (trimmed.StartsWith("{{wildcard(", StringComparison.OrdinalIgnoreCase) && trimmed.EndsWith(")}}", StringComparison.Ordinal))
        {
            return int.TryParse(trimmed.AsSpan(11, trimmed.Length - 14), NumberStyles.None, CultureInfo.InvariantCulture, out number) && number > 0;
        }

        return false;
    }
}
