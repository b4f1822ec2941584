using System.Text;
using Broker.Abstractions;
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

    private SubjectMapping(string source, SubjectTransform[] transforms, int[] bounds, IReadOnlyList<(string Subject, int Weight, string? Cluster)> shown)
    {
        Source = source;
        var tokens = source.Split('.');
        sourceTokens = [.. tokens.Select(Encoding.UTF8.GetBytes)];
        HasWildcard = tokens.Any(t => t is "*" or ">");
        this.transforms = transforms;
        this.bounds = bounds;
        Shown = shown;
    }

    public string Source { get; }

    /// <summary>Whether the source has a wildcard token (else only that subject is mapped).</summary>
    public bool HasWildcard { get; }

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
        var plain = new List<(SubjectTransform Transform, int Weight)>();
        var clusters = new List<(string Cluster, List<(SubjectTransform Transform, int Weight)> Destinations)>();
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
            if (string.IsNullOrEmpty(destination.Cluster))
            {
                plain.Add((transform, destination.Weight));
            }
            else if (clusters.FindIndex(c => c.Cluster == destination.Cluster) is var at and >= 0)
            {
                clusters[at].Destinations.Add((transform, destination.Weight));
            }
            else
            {
                clusters.Add((destination.Cluster, [(transform, destination.Weight)]));
            }
        }

        var chosen = Process(source, plain, seen);
        var shown = chosen.Select(c => (c.Transform.Destination, c.Bound, (string?)null)).ToList();

        // Cluster-scoped destinations are taken only in that cluster; this broker is in none, so nats-server's fallback
        // to the others always applies. They are checked and shown as it shows them.
        foreach (var (cluster, destinations) in clusters)
        {
            shown.AddRange(Process(source, destinations, seen).Select(c => (c.Transform.Destination, c.Bound, (string?)cluster)));
        }

        return new SubjectMapping(source, [.. chosen.Select(c => c.Transform)], [.. chosen.Select(c => c.Bound)], shown);
    }

    /// <summary>
    /// The destinations as nats-server keeps and shows them (/accountz <c>mappings</c>): ordered by weight, each with
    /// the sum of the weights up to it, the remainder going to the source subject last.
    /// </summary>
    public IReadOnlyList<(string Subject, int Weight, string? Cluster)> Shown { get; }

    // nats-server's processDestinations: the remainder to the source (unless it is listed), ordered by weight, summed.
    private static List<(SubjectTransform Transform, int Bound)> Process(string source, List<(SubjectTransform Transform, int Weight)> destinations, HashSet<string> seen)
    {
        var list = new List<(SubjectTransform Transform, int Weight)>(destinations);
        var sum = list.Sum(c => c.Weight);
        if (sum != 100 && !seen.Contains(source))
        {
            list.Add((SubjectTransform.Create(source, SubjectTransform.Tokenize(source)), list.Count == 0 ? 100 : 100 - sum));
        }

        var running = 0;
        return [.. list.OrderBy(c => c.Weight).Select(c => (c.Transform, running += c.Weight))];
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

    // nats-server's IsValidSubject (Subjects.IsValid on the UTF-8 bytes: no empty token, nothing after '>', no white space).
    private static bool IsValidSubject(string subject) => Subjects.IsValid(Encoding.UTF8.GetBytes(subject));
}
