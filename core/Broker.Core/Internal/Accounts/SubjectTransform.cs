using System.Globalization;
using System.Text;

namespace Broker.Core.Internal.Accounts;

/// <summary>
/// One source subject turned into one destination subject, as nats-server 2.9's <c>transform</c> (accounts.go
/// <c>newTransform</c>, <c>indexPlaceHolders</c>): compiled once at configuration time from the two strings, with
/// nats-server's refusal texts, then applied to published subjects into a caller's buffer without allocating
/// (<c>.Apply.cs</c>).
/// </summary>
/// <remarks>
/// As there, the destination's placeholders are read only when the source has a wildcard; with a literal source the
/// destination is taken as written, <c>$1</c> or <c>{{...}}</c> included. A function's name is matched letter by
/// letter as nats-server's regular expressions spell it (<c>[sS]plit[fF]rom[lL]eft</c>).
/// </remarks>
internal sealed partial class SubjectTransform
{
    private const string Prefix = "invalid mapping destination";
    private const string BadSubject = "invalid subject";

    // The part of a destination token after "{{" and before "}}" that names each function; \s is Go's.
    private const string Space = @"[\t\n\f\r ]*";

    private readonly byte[] destination;
    private readonly Part[]? parts;
    private readonly int sourceTokenCount;
    private readonly bool appendsRest;

    private SubjectTransform(string source, string destination, Part[]? parts, int sourceTokenCount, bool appendsRest)
    {
        Source = source;
        Destination = destination;
        this.destination = Encoding.UTF8.GetBytes(destination);
        this.parts = parts;
        this.sourceTokenCount = sourceTokenCount;
        this.appendsRest = appendsRest;
    }

    private enum Kind : byte
    {
        Literal,
        Wildcard,
        Partition,
        SplitFromLeft,
        SplitFromRight,
        SliceFromLeft,
        SliceFromRight,
        Split,
    }

    public string Source { get; }

    public string Destination { get; }

    /// <summary>Compiles a transform; throws <see cref="InvalidOperationException"/> with nats-server's text when it refuses it.</summary>
    public static SubjectTransform Create(string source, string destination)
    {
        var (sourceValid, sourceTokens, wildcards, sourceFull) = Info(source);
        var (destinationValid, destinationTokens, destinationWildcards, destinationFull) = Info(destination);
        if (!sourceValid || !destinationValid || destinationWildcards > 0 || sourceFull != destinationFull)
        {
            throw new InvalidOperationException(BadSubject);
        }

        if (wildcards == 0 && !sourceFull)
        {
            return new SubjectTransform(source, destination, null, sourceTokens.Length, appendsRest: false);
        }

        // Wildcard number (from 1) → index of its token in the source; any other number reads token 0, as the Go map's zero value.
        var wildcardTokens = new List<int>();
        for (var i = 0; i < sourceTokens.Length; i++)
        {
            if (sourceTokens[i] == "*")
            {
                wildcardTokens.Add(i);
            }
        }

        var parts = new Part[destinationTokens.Length];
        var placeholders = 0;
        for (var i = 0; i < destinationTokens.Length; i++)
        {
            var token = destinationTokens[i];
            var (kind, numbers, number, text) = Placeholder(token);
            if (kind == Kind.Literal)
            {
                parts[i] = new Part(kind, Encoding.UTF8.GetBytes(token), [], -1, []);
                continue;
            }

            placeholders++;
            var sources = new int[numbers.Length];
            for (var s = 0; s < sources.Length; s++)
            {
                var wildcard = numbers[s];
                if (wildcard > wildcards)
                {
                    throw Refused("wildcard index out of range", $"{token}: [{wildcard.ToString(CultureInfo.InvariantCulture)}]");
                }

                sources[s] = wildcard >= 1 ? wildcardTokens[(int)wildcard - 1] : 0;
            }

            parts[i] = new Part(kind, [], sources, number, Encoding.UTF8.GetBytes(text));
        }

        if (placeholders < wildcards)
        {
            throw Refused("not using all of the token wildcard(s)", destination);
        }

        return new SubjectTransform(source, destination, parts, sourceTokens.Length, destinationTokens[^1] == ">");
    }

    /// <summary>
    /// Checks a destination's tokens before it is compiled, as nats-server's <c>ValidateMappingDestination</c>: every
    /// <c>{{...}}</c> token must name a known function, and no token may be empty or hold white space.
    /// </summary>
    public static void ValidateDestination(string destination)
    {
        var afterFull = false;
        foreach (var token in destination.Split('.'))
        {
            if (token.Length == 0 || afterFull)
            {
                throw Refused("invalid subject", token);
            }

            if (IsFunctionToken(token))
            {
                if (!Functions.Any(f => f.Pattern.IsMatch(token)))
                {
                    throw Refused("unknown function", token);
                }

                continue;
            }

            if (token == ">")
            {
                afterFull = true;
            }
            else if (token.AsSpan().IndexOfAny("\t\n\f\r ") >= 0)
            {
                // nats-server returns this one without naming the token.
                throw new InvalidOperationException(Prefix + ": invalid subject");
            }
        }
    }

    /// <summary>The destination with the source's wildcards in place (<c>foo.*.&gt;</c> → <c>foo.$1.&gt;</c>), as nats-server's <c>transformTokenize</c>.</summary>
    public static string Tokenize(string subject)
    {
        var tokens = subject.Split('.');
        var wildcard = 1;
        for (var i = 0; i < tokens.Length; i++)
        {
            if (tokens[i] == "*")
            {
                tokens[i] = "$" + (wildcard++).ToString(CultureInfo.InvariantCulture);
            }
        }

        return string.Join('.', tokens);
    }

    private static InvalidOperationException Refused(string reason, string token) => new($"{Prefix}: {reason} in {token}");

    private static bool IsFunctionToken(string token)
        => token.Length > 4 && token.StartsWith("{{", StringComparison.Ordinal) && token.EndsWith("}}", StringComparison.Ordinal);

    // nats-server's subjectInfo: valid, tokens, partial wildcards, full wildcard (a token after '>' or an empty one is invalid).
    private static (bool Valid, string[] Tokens, int Wildcards, bool Full) Info(string subject)
    {
        if (subject.Length == 0)
        {
            return (false, [], 0, false);
        }

        var tokens = subject.Split('.');
        var wildcards = 0;
        var full = false;
        foreach (var token in tokens)
        {
            if (token.Length == 0 || full)
            {
                return (false, [], 0, false);
            }

            if (token == ">")
            {
                full = true;
            }
            else if (token == "*")
            {
                wildcards++;
            }
        }

        return (true, tokens, wildcards, full);
    }

    // One destination token: a literal, or a function of source tokens (their indexes in the published subject).
    private sealed record Part(Kind Kind, byte[] Literal, int[] Sources, int Number, byte[] Text);
}
