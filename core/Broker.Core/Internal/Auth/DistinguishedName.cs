using System.Diagnostics.CodeAnalysis;
using System.Security.Cryptography.X509Certificates;
using System.Text;

namespace Broker.Core.Internal.Auth;

/// <summary>
/// A distinguished name as an ordered list of <c>TYPE=value</c> parts, most specific first (RFC 4514 order, as
/// nats-server's LDAP DN comparison). Attribute types compare case-insensitively and by their short names
/// (<c>S</c> and <c>ST</c> are the same); values compare exactly.
/// </summary>
internal readonly struct DistinguishedName : IEquatable<DistinguishedName>
{
    private static readonly Dictionary<string, string> ShortNames = new(StringComparer.Ordinal)
    {
        ["2.5.4.3"] = "CN",
        ["2.5.4.4"] = "SN",
        ["2.5.4.5"] = "SERIALNUMBER",
        ["2.5.4.6"] = "C",
        ["2.5.4.7"] = "L",
        ["2.5.4.8"] = "ST",
        ["2.5.4.9"] = "STREET",
        ["2.5.4.10"] = "O",
        ["2.5.4.11"] = "OU",
        ["2.5.4.17"] = "POSTALCODE",
        ["0.9.2342.19200300.100.1.1"] = "UID",
        ["0.9.2342.19200300.100.1.25"] = "DC",
        ["1.2.840.113549.1.9.1"] = "EMAILADDRESS",
    };

    private static readonly Dictionary<string, string> Aliases = new(StringComparer.OrdinalIgnoreCase)
    {
        ["S"] = "ST",
        ["E"] = "EMAILADDRESS",
    };

    private readonly string[]? parts;

    private DistinguishedName(string[] parts)
    {
        this.parts = parts;
    }

    public bool IsEmpty => parts is null || parts.Length == 0;

    public static DistinguishedName FromCertificate(X509Certificate2 certificate)
    {
        var list = new List<string>();
        foreach (var rdn in certificate.SubjectName.EnumerateRelativeDistinguishedNames(reversed: true))
        {
            if (rdn.HasMultipleElements)
            {
                // Multi-valued RDNs are rare in client certificates; keep them as .NET formats them.
                list.Add(rdn.RawData.Length == 0 ? string.Empty : new X500DistinguishedName(rdn.RawData.Span).Name);
                continue;
            }

            var oid = rdn.GetSingleElementType().Value ?? string.Empty;
            var type = ShortNames.TryGetValue(oid, out var shortName) ? shortName : oid;
            list.Add(type + "=" + rdn.GetSingleElementValue());
        }

        return new DistinguishedName([.. list]);
    }

    /// <summary>Parses <c>CN=alice,OU=eng,O=Acme</c> (commas may be escaped with a backslash).</summary>
    public static bool TryParse(string text, [NotNullWhen(true)] out DistinguishedName name)
    {
        name = default;
        var list = new List<string>();
        var current = new StringBuilder();
        for (var i = 0; i <= text.Length; i++)
        {
            if (i < text.Length && text[i] == '\\' && i + 1 < text.Length)
            {
                current.Append(text[++i]);
                continue;
            }

            if (i < text.Length && text[i] != ',')
            {
                current.Append(text[i]);
                continue;
            }

            var part = current.ToString();
            current.Clear();
            var equals = part.IndexOf('=', StringComparison.Ordinal);
            if (equals <= 0)
            {
                return false;
            }

            var type = part[..equals].Trim().ToUpperInvariant();
            type = Aliases.TryGetValue(type, out var canonical) ? canonical : type;
            list.Add(type + "=" + part[(equals + 1)..].Trim());
        }

        name = new DistinguishedName([.. list]);
        return list.Count > 0;
    }

    public bool Equals(DistinguishedName other) => (parts ?? []).AsSpan().SequenceEqual(other.parts ?? []);

    /// <summary>The same parts in any order (nats-server accepts a reordered DN after an exact match fails).</summary>
    public bool HasSameParts(DistinguishedName other)
    {
        var mine = (parts ?? []).Order(StringComparer.Ordinal);
        var theirs = (other.parts ?? []).Order(StringComparer.Ordinal);
        return mine.SequenceEqual(theirs, StringComparer.Ordinal);
    }

    public override bool Equals(object? obj) => obj is DistinguishedName other && Equals(other);

    public override int GetHashCode() => parts is null ? 0 : string.Join(',', parts).GetHashCode(StringComparison.Ordinal);

    public override string ToString() => parts is null ? string.Empty : string.Join(',', parts);
}
