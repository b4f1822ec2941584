using System.Text;

namespace Broker.Core.Internal.Jwt;

/// <summary>
/// NATS decorated files: a creds file holds a user JWT and its seed, each between a <c>-----BEGIN ...-----</c> line
/// and an <c>------END ...------</c> line; an operator file may hold a decorated JWT or the bare token.
/// </summary>
internal static class CredsFile
{
    /// <summary>The user JWT and seed of a creds file's text.</summary>
    /// <exception cref="FormatException">The text has no JWT block or no seed block.</exception>
    public static (string Jwt, string Seed) Parse(string text)
    {
        var items = DecoratedItems(text);
        if (items.Count < 1)
        {
            throw new FormatException("no JWT found in the creds file");
        }

        if (items.Count < 2)
        {
            throw new FormatException("no nkey seed found in the creds file");
        }

        return (items[0], items[1]);
    }

    /// <summary>The first decorated item of <paramref name="text"/>, or the whole text trimmed when it has no decorations.</summary>
    public static string ParseDecoratedJwt(string text)
    {
        var items = DecoratedItems(text);
        return items.Count > 0 ? items[0] : text.Trim();
    }

    /// <summary>A creds file's text for <paramref name="jwt"/> and <paramref name="seed"/>, as nsc writes it.</summary>
    public static string Format(string jwt, string seed)
    {
        var text = new StringBuilder();
        text.Append("-----BEGIN NATS USER JWT-----\n").Append(jwt).Append("\n------END NATS USER JWT------\n\n");
        text.Append("************************* IMPORTANT *************************\n");
        text.Append("NKEY Seed printed below can be used to sign and prove identity.\n");
        text.Append("NKEYs are sensitive and should be treated as secrets.\n\n");
        text.Append("-----BEGIN USER NKEY SEED-----\n").Append(seed).Append("\n------END USER NKEY SEED------\n\n");
        text.Append("*************************************************************\n");
        return text.ToString();
    }

    // An item is the line following a line of at least three dashes that has text and ends with three dashes, when the
    // line after it is such a line too.
    private static List<string> DecoratedItems(string text)
    {
        var lines = text.Split('\n');
        var items = new List<string>();
        for (var i = 0; i + 2 < lines.Length; i++)
        {
            if (IsBanner(lines[i]) && IsBanner(lines[i + 2]))
            {
                var item = lines[i + 1].Trim();
                if (item.Length > 0 && !item.StartsWith("---", StringComparison.Ordinal))
                {
                    items.Add(item);
                    i += 2;
                }
            }
        }

        return items;
    }

    private static bool IsBanner(string line)
    {
        var trimmed = line.Trim();
        return trimmed.Length > 6 && trimmed.StartsWith("---", StringComparison.Ordinal) && trimmed.EndsWith("---", StringComparison.Ordinal);
    }
}
