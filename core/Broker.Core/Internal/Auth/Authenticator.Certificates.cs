using System.Security.Cryptography.X509Certificates;

namespace Broker.Core.Internal.Auth;

/// <summary>
/// <c>verify_and_map</c>: the client certificate names the user (nats-server <c>auth.go checkClientTLSCertSubject</c>).
/// Candidates are tried in nats-server's order: e-mail, DNS and URI subject alternative names, each looked up as a
/// user name, then the subject as a distinguished name, equal in order first and then with its parts reordered.
/// No password is checked: the TLS layer has already verified the certificate against the CA.
/// </summary>
internal sealed partial class Authenticator
{
    /// <summary>
    /// Whether certificates are mapped to users: only against a users list, as in nats-server; with a token or a
    /// single user, <c>verify_and_map</c> connections authenticate with CONNECT credentials like any other.
    /// </summary>
    public bool MapsCertificates => AuthRequired && users.Count > 0;

    /// <summary>The user a verified client certificate maps to, or <see langword="null"/> (Authorization Violation).</summary>
    public AuthenticatedUser? AuthenticateCertificate(X509Certificate2 certificate)
    {
        ArgumentNullException.ThrowIfNull(certificate);
        if (!AuthRequired)
        {
            return Anonymous;
        }

        foreach (var name in CertificateNames.AlternativeNames(certificate))
        {
            if (users.TryGetValue(name, out var byName))
            {
                return byName.Result;
            }
        }

        var subject = DistinguishedName.FromCertificate(certificate);
        if (subject.IsEmpty)
        {
            return null;
        }

        UserEntry? reordered = null;
        foreach (var (name, entry) in users)
        {
            if (!DistinguishedName.TryParse(name, out var configured))
            {
                continue;
            }

            if (configured.Equals(subject))
            {
                return entry.Result;
            }

            if (reordered is null && configured.HasSameParts(subject))
            {
                reordered = entry;
            }
        }

        return reordered?.Result;
    }
}
