using System.Net;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Jwt;

namespace Broker.Core.Internal.Auth;

/// <summary>
/// Operator mode (nats-server <c>processClientOrLeafAuthentication</c> with trusted keys): every client presents a
/// user JWT, verified along the chain operator → account → user, and proves it holds the user key by signing the
/// INFO nonce (unless the JWT is a bearer token the account allows). Each failure is an Authorization Violation;
/// <c>failure</c> says why in nats-server's debug words.
/// </summary>
internal sealed partial class Authenticator
{
    private readonly JwtAccounts? jwtAccounts;

    /// <summary>Whether the broker is in operator mode: clients authenticate with user JWTs only.</summary>
    public bool ChecksJwt => jwtAccounts is not null;

    /// <summary>
    /// Authenticates a CONNECT in operator mode: <paramref name="token"/> (CONNECT <c>jwt</c>) and
    /// <paramref name="signature"/> (<c>sig</c>, of <paramref name="nonce"/>); <paramref name="host"/> is the client's
    /// address for the JWT's <c>src</c>, <paramref name="connectionType"/> <c>STANDARD</c> or <c>WEBSOCKET</c>.
    /// </summary>
    public AuthenticatedUser? AuthenticateJwt(string? token, string? signature, ReadOnlySpan<byte> nonce, IPAddress? host, string connectionType, DateTimeOffset now, out string? failure)
    {
        var accounts = jwtAccounts!;
        if (string.IsNullOrEmpty(token))
        {
            failure = "Authentication requires a user JWT";
            return null;
        }

        if (!JwtToken.TryDecodeUser(token, out var claims, out var error))
        {
            failure = "User JWT not valid: " + error;
            return null;
        }

        if (ClaimsValidator.CheckUser(claims, now) is { } invalid)
        {
            failure = "User JWT no longer valid: " + invalid;
            return null;
        }

        if (!ConnectionTypeAllowed(claims.Nats.AllowedConnectionTypes, connectionType, out failure))
        {
            return null;
        }

        if (!accounts.TryLookup(claims.Account!, out var account, out error))
        {
            failure = "Account JWT lookup error: " + error;
            return null;
        }

        var accountJwt = account.Jwt!;
        if (!accounts.IsTrusted(accountJwt.Issuer))
        {
            failure = "Account JWT not signed by trusted operator";
            return null;
        }

        var granted = (UserPermissionLimitsClaim)claims.Nats;
        if (!accountJwt.HasIssuer(claims.Issuer!, out var scope))
        {
            failure = "User JWT issuer is not known";
            return null;
        }

        if (scope is not null)
        {
            // A scoped signing key's users carry nothing of their own: the scope's template is theirs.
            if (!claims.Nats.HasEmptyPermissionsAndLimits())
            {
                failure = "User JWT is not valid: scoped users require no permissions or limits set";
                return null;
            }

            if (ScopeTemplate.Apply(scope.Template, claims, accountJwt.Claims) is not { } templated)
            {
                failure = "User JWT generated invalid permissions";
                return null;
            }

            granted = templated;
        }

        if (account.IsExpired || ClaimsValidator.CheckTimes(accountJwt.Claims, now) is not null)
        {
            failure = "Account JWT has expired";
            return null;
        }

        if (granted.BearerToken && accountJwt.DisallowBearer)
        {
            failure = "Account does not allow bearer token";
            return null;
        }

        if (!granted.BearerToken && !VerifyNonce(claims.Subject!, signature, nonce, out failure))
        {
            return null;
        }

        if (accountJwt.IsRevoked(claims.Subject!, claims.IssuedAt))
        {
            failure = "User authentication revoked";
            return null;
        }

        if (!SourceAllowed(granted.Source, host))
        {
            failure = $"Bad src Ip {host}";
            return null;
        }

        var validFor = TimeWindow.ValidFor(granted, now);
        if (validFor is null)
        {
            failure = "Outside connect times";
            return null;
        }

        PermissionsTemplate? permissions;
        try
        {
            permissions = UserPermissions.Compile(granted.Publish, granted.Subscribe, granted.Response, time) ?? accountJwt.DefaultPermissions;
        }
        catch (InvalidOperationException ex)
        {
            failure = "User JWT generated invalid permissions: " + ex.Message;
            return null;
        }

        var expiresAt = claims.Expires > 0 ? DateTimeOffset.FromUnixTimeSeconds(claims.Expires) : (DateTimeOffset?)null;
        if (validFor.Value != TimeSpan.MaxValue && (expiresAt is null || now + validFor.Value < expiresAt))
        {
            expiresAt = now + validFor.Value;
        }

        failure = null;
        // nats-server's buildInternalNkeyUser: the signing key whenever the JWT names its issuer_account.
        var user = new JwtUser(token, claims, string.IsNullOrEmpty(claims.Nats.IssuerAccount) ? account.Name : claims.Issuer!, AccountJwt.ToInt(granted.Subscriptions), AccountJwt.ToInt(granted.Payload), expiresAt);
        return new AuthenticatedUser(claims.Subject, permissions, account.Name, user);
    }

    private static bool ConnectionTypeAllowed(List<string>? allowed, string connectionType, out string? failure)
    {
        failure = null;
        if (allowed is null || allowed.Count == 0)
        {
            return true;
        }

        var known = 0;
        foreach (var type in allowed)
        {
            var upper = type.ToUpperInvariant();
            if (upper is "STANDARD" or "WEBSOCKET" or "LEAFNODE" or "LEAFNODE_WS" or "MQTT" or "MQTT_WS")
            {
                known++;
                if (upper == connectionType)
                {
                    return true;
                }
            }
        }

        // nats-server: unknown types alone refuse; known ones that do not include this connection refuse too.
        failure = known == 0 ? "invalid connection types" : "Connection type not allowed";
        return false;
    }

    private static bool SourceAllowed(List<string>? sources, IPAddress? host)
    {
        if (sources is null || sources.Count == 0)
        {
            return true;
        }

        if (host is null)
        {
            return false;
        }

        if (host.IsIPv4MappedToIPv6)
        {
            host = host.MapToIPv4();
        }

        foreach (var source in sources)
        {
            if (IPNetwork.TryParse(source, out var network) && network.Contains(host))
            {
                return true;
            }
        }

        return false;
    }

    private static bool VerifyNonce(string userKey, string? signature, ReadOnlySpan<byte> nonce, out string? failure)
    {
        if (string.IsNullOrEmpty(signature))
        {
            failure = "Signature missing";
            return false;
        }

        if (!TryDecodeSignature(signature, out var signed))
        {
            failure = "Signature not valid base64";
            return false;
        }

        try
        {
            using var key = NATS.NKeys.KeyPair.FromPublicKey(userKey);
            if (nonce.IsEmpty || !key.Verify(nonce.ToArray(), signed))
            {
                failure = "Signature not verified";
                return false;
            }
        }
        catch (NATS.NKeys.NKeysException ex)
        {
            failure = "User nkey not valid: " + ex.Message;
            return false;
        }
        catch (ArgumentException)
        {
            failure = "Signature not verified";
            return false;
        }

        failure = null;
        return true;
    }
}

/// <summary>
/// What a user JWT gave a connection (operator mode): the token and claims (/connz <c>jwt</c>, <c>name_tag</c>), the
/// key that signed it for the account (/connz <c>issuer_key</c>: the account, or the signing key that issued it),
/// the user's subscription and payload limits (-1 for none; nats-server's <c>applyAccountLimits</c> takes the lower
/// of these and the account's), and when the connection's authentication expires (the JWT's <c>exp</c> or the end of
/// its <c>times</c> window), if ever.
/// </summary>
internal sealed record JwtUser(string Token, UserClaims Claims, string IssuerKey, int MaxSubscriptions, int MaxPayload, DateTimeOffset? ExpiresAt);
