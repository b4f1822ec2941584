using System.Formats.Asn1;
using System.Security.Cryptography.X509Certificates;

namespace Broker.Core.Internal.Auth;

/// <summary>
/// The subject alternative names of a certificate that can name a user, in nats-server's order: e-mail addresses,
/// DNS names, then URIs (Go's <c>EmailAddresses</c>, <c>DNSNames</c>, <c>URIs</c>).
/// </summary>
internal static class CertificateNames
{
    private const string SubjectAlternativeNameOid = "2.5.29.17";

    // GeneralName choices (RFC 5280 4.2.1.6), implicitly tagged.
    private static readonly Asn1Tag Rfc822Name = new(TagClass.ContextSpecific, 1);
    private static readonly Asn1Tag DnsName = new(TagClass.ContextSpecific, 2);
    private static readonly Asn1Tag UniformResourceIdentifier = new(TagClass.ContextSpecific, 6);

    public static IReadOnlyList<string> AlternativeNames(X509Certificate2 certificate)
    {
        var extension = certificate.Extensions[SubjectAlternativeNameOid];
        if (extension is null)
        {
            return [];
        }

        var emails = new List<string>();
        var dns = new List<string>();
        var uris = new List<string>();
        try
        {
            var reader = new AsnReader(extension.RawData, AsnEncodingRules.DER);
            var names = reader.ReadSequence();
            while (names.HasData)
            {
                var tag = names.PeekTag();
                if (tag.HasSameClassAndValue(Rfc822Name))
                {
                    emails.Add(names.ReadCharacterString(UniversalTagNumber.IA5String, Rfc822Name));
                }
                else if (tag.HasSameClassAndValue(DnsName))
                {
                    dns.Add(names.ReadCharacterString(UniversalTagNumber.IA5String, DnsName));
                }
                else if (tag.HasSameClassAndValue(UniformResourceIdentifier))
                {
                    uris.Add(names.ReadCharacterString(UniversalTagNumber.IA5String, UniformResourceIdentifier));
                }
                else
                {
                    names.ReadEncodedValue();
                }
            }
        }
        catch (AsnContentException)
        {
            // A malformed extension names nobody; the subject may still match.
            return [];
        }

        return [.. emails, .. dns, .. uris];
    }
}
