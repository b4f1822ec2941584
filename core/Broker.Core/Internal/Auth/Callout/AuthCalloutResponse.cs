using System.Diagnostics.CodeAnalysis;
using System.Text;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Jwt;
using NATS.NKeys;

namespace Broker.Core.Internal.Auth.Callout;

/// <summary>What a request expected of its answer.</summary>
/// <param name="Account">The callout account's name (in the texts): the configured one, or in operator mode the public key of the client's account.</param>
/// <param name="Issuer">The key the user JWT must be issued by (the configured issuer; in operator mode the callout account's public key).</param>
/// <param name="UserNkey">The fresh user key of the request: the response and the user JWT must be for it.</param>
/// <param name="ServerId">The server id: the response's audience.</param>
/// <param name="CurveKey">The server's curve key when requests are sealed, else null.</param>
/// <param name="ServiceXKey">The service's curve key when requests are sealed, else null.</param>
/// <param name="Operator">Operator mode: the callout account (its JWT's signing keys and <c>authorization</c>) and the JWT accounts to place users in; null in server-config mode.</param>
internal sealed record CalloutExpectation(string Account, string Issuer, string UserNkey, string ServerId, KeyPair? CurveKey, string? ServiceXKey, OperatorCallout? Operator = null);

/// <summary>The operator-mode side of an expectation: the account whose JWT enables the callout, and where users are looked up.</summary>
internal sealed record OperatorCallout(Account Account, JwtAccounts Accounts);

/// <summary>What an accepted answer grants: the user JWT, its placement, its permissions and limits (a scoped signing key's template filled in), and how long its connect window lasts (<see cref="TimeSpan.MaxValue"/>: no window).</summary>
internal sealed record CalloutGrant(UserClaims User, Account Placement, UserPermissionLimitsClaim Granted, TimeSpan ValidFor);

/// <summary>
/// Checks an <c>authorization_response</c> in nats-server 2.10's order (<c>processClientOrLeafCallout</c>'s
/// <c>decodeResponse</c>, then <c>processReply</c>) and with its texts, the first letter upper-cased as it logs them:
/// an empty answer is a refusal without a reason; a sealed answer is opened; the response JWT must verify, validate,
/// be for the request's user key and this server, and carry no error (in operator mode, unless sealed, be signed by the
/// callout account or one of its signing keys); the user JWT inside must verify and validate, be for the same user
/// key and within its connect times. Server-config mode: it is issued by the configured issuer (no
/// <c>issuer_account</c>) and names in <c>aud</c> an account that exists (the placement). Operator mode: its issuer
/// account (<c>issuer_account</c>, else its issuer) is the callout account or one of its <c>allowed_accounts</c>, and
/// the placement; that account must be found (and trusted) by the resolver and know the user's issuer, whose scope,
/// if it is a scoped signing key, gives the user its permissions.
/// </summary>
internal static class AuthCalloutResponse
{
    /// <summary>Where a JWT starts (base64url of <c>{"</c>); anything else from a sealed request is opened first.</summary>
    private static readonly byte[] JwtPrefix = "eyJ"u8.ToArray();

    /// <summary>What the answer grants, or false with the reason to log.</summary>
    public static bool TryVerify(ReadOnlySpan<byte> payload, CalloutExpectation expected, AccountRegistry accounts, DateTimeOffset now, [NotNullWhen(true)] out CalloutGrant? grant, [NotNullWhen(false)] out string? reason)
    {
        reason = Check(payload, expected, accounts, now, out grant);
        if (reason is null && grant is not null)
        {
            return true;
        }

        grant = null;
        reason ??= "auth callout violation: no user";
        reason = char.ToUpperInvariant(reason[0]) + reason[1..];
        return false;
    }

    private static string? Check(ReadOnlySpan<byte> payload, CalloutExpectation expected, AccountRegistry accounts, DateTimeOffset now, out CalloutGrant? grant)
    {
        grant = null;
        var account = expected.Account;
        if (payload.IsEmpty)
        {
            return $"auth callout violation: \"no reason supplied\" on account \"{account}\"";
        }

        var encrypted = false;
        if (expected.CurveKey is { } curveKey && !payload.StartsWith(JwtPrefix))
        {
            try
            {
                payload = curveKey.Open(payload.ToArray(), expected.ServiceXKey!);
                encrypted = true;
            }
            catch (Exception ex) when (ex is NKeysException or ArgumentException or System.Security.Cryptography.CryptographicException)
            {
                return $"error decrypting auth callout response on account \"{account}\": {ex.Message}";
            }
        }

        if (!JwtToken.TryDecode(Encoding.ASCII.GetString(payload), AuthorizationClaimsJsonContext.Default.AuthorizationResponseClaims, out var response, out var error))
        {
            return error;
        }

        if (Validate(response, now) is { } issue)
        {
            return "authorization response had validation errors: " + issue;
        }

        if (response.Subject != expected.UserNkey)
        {
            return "auth callout violation: auth callout response is not for expected user";
        }

        if (response.Audience != expected.ServerId)
        {
            return "auth callout violation: auth callout response is not for server";
        }

        if (!string.IsNullOrEmpty(response.Nats.Error))
        {
            return "auth callout service returned an error: " + response.Nats.Error;
        }

        // Operator mode: a plain response must come from the callout account (or its signing keys); a sealed one proved itself by opening.
        if (expected.Operator is { } op && !encrypted)
        {
            var signer = string.IsNullOrEmpty(response.Nats.IssuerAccount) ? response.Issuer : response.Nats.IssuerAccount;
            if (signer != account && op.Account.Jwt?.Claims.Nats.SigningKeys?.ContainsKey(signer ?? "") != true)
            {
                return "auth callout signing key is unknown";
            }
        }

        if (!JwtToken.TryDecodeUser(response.Nats.Jwt!, out var user, out error))
        {
            return error;
        }

        if ((JwtToken.IsPublicKey(user.Subject, PrefixByte.User) ? ClaimsValidator.CheckUser(user, now) : $"{user.Subject} is not a valid user public key") is { } invalid)
        {
            return "Error validating user JWT: " + invalid;
        }

        if (user.Subject != expected.UserNkey)
        {
            return $"Expected authorized user of \"{expected.UserNkey}\" but got \"{user.Subject}\" on account \"{account}\"";
        }

        if (TimeWindow.ValidFor(user.Nats, now) is not { } validFor)
        {
            return $"authorized user on account \"{account}\" outside of valid connect times";
        }

        var refusal = expected.Operator is { } callout
            ? PlaceByIssuer(user, expected, callout, out var placement, out var granted)
            : PlaceByAudience(user, expected, accounts, out placement, out granted);
        if (refusal is not null)
        {
            return refusal;
        }

        grant = new CalloutGrant(user, placement!, granted!, validFor);
        return null;
    }

    // Server-config mode (getIssuerAccount, assignAccountAndPermissions): the configured issuer, the audience places.
    private static string? PlaceByAudience(UserClaims user, CalloutExpectation expected, AccountRegistry accounts, out Account? placement, out UserPermissionLimitsClaim? granted)
    {
        placement = null;
        granted = null;
        var account = expected.Account;
        if (!string.IsNullOrEmpty(user.Nats.IssuerAccount))
        {
            return $"error non operator mode account \"{account}\": attempted to use issuer_account";
        }

        if (user.Issuer != expected.Issuer)
        {
            return $"wrong issuer for auth callout response on account \"{account}\", expected \"{expected.Issuer}\" got \"{user.Issuer}\"";
        }

        var name = user.Audience ?? "";
        if (!accounts.TryGet(name, out placement))
        {
            return $"no valid account \"{name}\" for auth callout response on account \"{account}\": account missing";
        }

        granted = user.Nats;
        return null;
    }

    // Operator mode: the user JWT's issuer account places it, if the callout account allows it; that account must know
    // the issuing key, and a scoped key's template gives the permissions.
    private static string? PlaceByIssuer(UserClaims user, CalloutExpectation expected, OperatorCallout callout, out Account? placement, out UserPermissionLimitsClaim? granted)
    {
        placement = null;
        granted = null;
        var account = expected.Account;
        var issuerAccount = string.IsNullOrEmpty(user.Nats.IssuerAccount) ? user.Issuer! : user.Nats.IssuerAccount;
        if (issuerAccount != expected.Issuer && callout.Account.Jwt?.Callout?.Allows(issuerAccount) != true)
        {
            return $"account \"{user.Issuer}\" not permitted as valid account option for auth callout for account \"{account}\"";
        }

        if (!callout.Accounts.TryLookup(issuerAccount, out placement, out var error) || placement.Jwt is not { } placementJwt)
        {
            return $"no valid account \"{issuerAccount}\" for auth callout response on account \"{account}\": {error ?? "account missing"}";
        }

        if (!placementJwt.HasIssuer(user.Issuer!, out var scope))
        {
            return $"user JWT issuer \"{user.Issuer}\" is not known";
        }

        granted = user.Nats;
        if (scope is not null)
        {
            if (!user.Nats.HasEmptyPermissionsAndLimits())
            {
                return "user JWT is not valid: scoped users require no permissions or limits set";
            }

            if (ScopeTemplate.Apply(scope.Template, user, placementJwt.Claims) is not { } templated)
            {
                return "user JWT generated invalid permissions: generated invalid subject";
            }

            granted = templated;
        }

        return null;
    }

    // nats-io/jwt AuthorizationResponseClaims.Validate, then the registered claims' time checks.
    private static string? Validate(AuthorizationResponseClaims response, DateTimeOffset now)
    {
        var fields = response.Nats;
        if (!JwtToken.IsPublicKey(response.Subject, PrefixByte.User))
        {
            return "Subject must be a user public key";
        }

        if (!JwtToken.IsPublicKey(response.Audience, PrefixByte.Server))
        {
            return "Audience must be a server public key";
        }

        if (string.IsNullOrEmpty(fields.Error) && string.IsNullOrEmpty(fields.Jwt))
        {
            return "Error or Jwt is required";
        }

        if (!string.IsNullOrEmpty(fields.Error) && !string.IsNullOrEmpty(fields.Jwt))
        {
            return "Only Error or Jwt can be set";
        }

        if (!string.IsNullOrEmpty(fields.IssuerAccount) && !JwtToken.IsPublicKey(fields.IssuerAccount, PrefixByte.Account))
        {
            return "issuer_account is not an account public key";
        }

        return ClaimsValidator.CheckTimes(response, now);
    }
}
