using System.Text;
using Broker.Core.Auth;
using Broker.Core.Internal.Clients;

namespace Broker.Core.Internal.Accounts;

/// <summary>
/// One source subject with its weighted destinations (nats-server's <c>mapping</c>, built as
/// <c>Account.AddWeightedMappings</c> builds it): checked with its texts, the remainder of the weights kept on the
/// source subject, the destinations ordered by weight with the weights summed, so a draw of 0-99 picks the first
/// whose sum exceeds it.
/// </summary>
internal sealed class SubjectMapping
{
    private readonly byte[][] sourceTokens;
    private readonly SubjectTransform[] transforms;
    private readonly int[] bounds;

    private SubjectMapping(string source, SubjectTransform[] transforms, int[] bounds, IReadOnlyList<MappingDestinationOptions> configured)
    {
        Source = source;
        var tokens = source.Split('.');
        sourceTokens = [.. tokens.Select(Encoding.UTF8.GetBytes)];
        HasWildcard = tokens.Any(t => t is "*" or ">");
        this.transforms = transforms;
        this.bounds = bounds;
        Configured = configured;
    }

    public string Source { get; }

    /// <summary>Whether the source has a wildcard token (else only that subject is mapped).</summary>
    public bool HasWildcard { get; }

    /// <summary>The destinations as configured (for /accountz).</summary>
    public IReadOnlyList<MappingDestinationOptions> Configured { get; }

    /// <summary>Builds a mapping; throws <see cref="InvalidOperationException"/> with nats-server's text when it refuses it.</summary>
    public static SubjectMapping Create(MappingOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var source = options.Source ?? "";
        if (!IsValidSubject(source))
        {
            throw new InvalidOperationException("invalid subject");
        }

        var seen = new HashSet<string>(StringComparer.Ordinal);
        var chosen = new List<(SubjectTransform Transform, int Weight)>();
        var total = 0;
        foreach (var destination in options.Destinations)
        {
            var subject = destination.Subject ?? "";
            if (!seen.Add(subject))
            {
                throw new InvalidOperationException("duplicate entry for " + GoQuote.Quote(Encoding.UTF8.GetBytes(subject)));
            }

            if (destination.Weight is > 100 or < 0)
            {
                throw new InvalidOperationException("individual weights need to be <= 100");
            }

            total += destination.Weight;
            if (total > 100)
            {
                throw new InvalidOperationException("total weight needs to be <= 100");
            }

            SubjectTransform.ValidateDestination(subject);
            var transform = SubjectTransform.Create(source, subject);

            // Cluster-scoped destinations are taken only in that cluster; this broker is in none (nats-server falls back to the others).
            if (string.IsNullOrEmpty(destination.Cluster))
            {
                chosen.Add((transform, destination.Weight));
            }
        }

        var sum = chosen.Sum(c => c.Weight);
        if (sum != 100 && !seen.Contains(source))
        {
            chosen.Add((SubjectTransform.Create(source, SubjectTransform.Tokenize(source)), chosen.Count == 0 ? 100 : 100 - sum));
        }

        chosen.Sort((a, b) => a.Weight.CompareTo(b.Weight));
        var bounds = new int[chosen.Count];
        var running = 0;
        for (var i = 0; i < chosen.Count; i++)
        {
            running += chosen[i].Weight;
            bounds[i] = running;
        }

        return new SubjectMapping(source, [.. chosen.Select(c => c.Transform)], bounds, [.. options.Destinations.Select(d => d.Clone())]);
    }

    /// <summary>Whether the published subject's tokens match the source (nats-server's <c>isSubsetMatchTokenized</c>).</summary>
    public bool Matches(ReadOnlySpan<byte> subject, ReadOnlySpan<Range> tokens)
    {
        for (var i = 0; i < sourceTokens.Length; i++)
        {
            if (i >= tokens.Length)
            {
                return false;
            }

            var test = sourceTokens[i];
            if (test is [(byte)'>'])
            {
                return true;
            }

            var token = subject[tokens[i]];
            if (token.IsEmpty || token is [(byte)'>'])
            {
                return false;
            }

            if (token is [(byte)'*'])
            {
                if (test is not [(byte)'*'])
                {
                    return false;
                }

                continue;
            }

            if (test is not [(byte)'*'] && !token.SequenceEqual(test))
            {
                return false;
            }
        }

        return tokens.Length == sourceTokens.Length;
    }

    /// <summary>
    /// The destination for one publish: the only one, or one drawn by weight. Null when the draw falls beyond the
    /// weights (possible only when the source is itself a destination and the weights stay under 100): nats-server then
    /// maps the publish to an empty subject, which nobody receives.
    /// </summary>
    public SubjectTransform? Choose()
    {
        if (transforms.Length == 1 && bounds[0] == 100)
        {
            return transforms[0];
        }

        var draw = Random.Shared.Next(100);
        for (var i = 0; i < bounds.Length; i++)
        {
            if (draw < bounds[i])
            {
                return transforms[i];
            }
        }

        return null;
    }

    // nats-server's IsValidSubject: no empty token, nothing after '>', no white space.
    private static bool IsValidSubject(string subject)
    {
        if (subject.Length == 0)
        {
            return false;
        }

        var afterFull = false;
        foreach (var token in subject.Split('.'))
        {
            if (token.Length == 0 || afterFull || token.AsSpan().IndexOfAny("\t\n\f\r ") >= 0)
            {
                return false;
            }

            afterFull = token == ">";
        }

        return true;
    }
}
