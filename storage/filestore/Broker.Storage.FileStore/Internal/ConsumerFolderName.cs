using System.Buffers;
using System.Text;

namespace Broker.Storage.FileStore.Internal;

/// <summary>The folder of a consumer under its stream's <c>obs/</c>, named after the consumer.</summary>
internal static class ConsumerFolderName
{
    private static readonly SearchValues<char> SafeFolderCharacters = SearchValues.Create("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-");

    /// <summary>A folder name for a consumer name: safe characters kept, anything else hex-escaped (the name itself when all are safe).</summary>
    public static string Of(string name)
    {
        if (!name.AsSpan().ContainsAnyExcept(SafeFolderCharacters))
        {
            return name;
        }

        var builder = new StringBuilder(name.Length);
        foreach (var c in name)
        {
            if (char.IsAsciiLetterOrDigit(c) || c is '_' or '-')
            {
                builder.Append(c);
            }
            else
            {
                builder.Append('%').Append(((int)c).ToString("X4", System.Globalization.CultureInfo.InvariantCulture));
            }
        }

        return builder.ToString();
    }
}
