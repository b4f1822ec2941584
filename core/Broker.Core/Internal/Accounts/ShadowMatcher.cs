using System.Text;
using Broker.Abstractions;

namespace Broker.Core.Internal.Accounts;

/// <summary>
/// Which stream imports a new subscription of the importing account takes part in, and on which subject it shadows
/// each in the exporter (nats-server's <c>addShadowSubscriptions</c>: an exact or wider subscription uses the import's
/// subject, a narrower one is mapped back, one that only overlaps is narrowed to the overlap first). Runs at SUB time.
/// </summary>
internal static class ShadowMatcher
{
    /// <summary>The (import, shadow subject) pairs for a subscription on <paramref name="subject"/>.</summary>
    public static List<(StreamImport Import, string Subject)>? Match(StreamImport[] imports, string subject)
    {
        List<(StreamImport, string)>? result = null;
        var tokens = subject.Split('.');
        var hasWildcard = Array.IndexOf(tokens, "*") >= 0 || tokens[^1] == ">";
        var subjectBytes = Encoding.UTF8.GetBytes(subject);
        foreach (var import in imports)
        {
            string? overlap = null;
            bool dynamic;
            var to = Encoding.UTF8.GetBytes(import.To);
            if (subject == import.To)
            {
                dynamic = false;
            }
            else if (Subjects.IsSubsetOf(subjectBytes, to))
            {
                dynamic = true;
            }
            else if (!hasWildcard)
            {
                continue;
            }
            else if (Subjects.IsSubsetOf(to, subjectBytes))
            {
                dynamic = false;
            }
            else
            {
                overlap = Overlap(tokens, import.To.Split('.'));
                if (overlap is null)
                {
                    continue;
                }

                dynamic = true;
            }

            (result ??= []).Add((import, import.ShadowSubject(subject, overlap, dynamic)));
        }

        return result;
    }

    // The subscription's wildcards replaced by the import's more specific tokens, when that makes it a subset.
    private static string? Overlap(string[] subscription, string[] import)
    {
        var tokens = new List<string>(subscription);
        var modified = false;
        for (var i = 0; i < tokens.Count && i < import.Length; i++)
        {
            if (tokens[i] == "*" && import[i] != ">")
            {
                tokens[i] = import[i];
                modified = true;
            }
        }

        var last = tokens.Count - 1;
        if (tokens[last] == ">" && import.Length >= tokens.Count)
        {
            tokens[last] = import[last];
            modified = true;
            for (var i = tokens.Count; i < import.Length; i++)
            {
                tokens.Add(import[i]);
            }
        }

        if (!modified)
        {
            return null;
        }

        var narrowed = string.Join('.', tokens);
        return Subjects.IsSubsetOf(Encoding.UTF8.GetBytes(narrowed), Encoding.UTF8.GetBytes(string.Join('.', import))) ? narrowed : null;
    }
}
