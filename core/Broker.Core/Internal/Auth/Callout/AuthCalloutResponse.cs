using System.Diagnostics.CodeAnalysis;
using System.Text;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Jwt;
using NATS.NKeys;

namespace Broker.Core.Internal.Auth.Callout;

/// <summary>What a request expected of its answer.</summary>
/// <param name="Account">The callout account's name (in the texts).</param>
/// <param name="Issuer">The configured issuer: the user JWT must be signed by it.</param>
/// <param name="UserNkey">The fresh user key of the request: the response and the user JWT must be for it.</param>
/// <param name="ServerId">The server id: the response's audience.</param>
/// <param name="CurveKey">The server's curve key when requests are sealed, else null.</param>
/// <param name="ServiceXKey">The service's curve key when requests are sealed, else null.</param>
internal sealed record CalloutExpectation(string Account, string Issuer, string UserNkey, string ServerId, KeyPair? CurveKey, string? ServiceXKey);

/// <summary>
/// Checks an <c>authorization_response</c> in nats-server 2.10's order (<c>processClientOrLeafCallout</c>'s
/// <c>decodeResponse</c>, then <c>processReply</c>) and with its texts, the first letter upper-cased as it logs them:
/// an empty answer is a refusal without a reason; a sealed answer is opened; the response JWT must verify, validate,
/// be for the request's user key and this server, and carry no error; the user JWT inside must verify and validate,
/// be for the same user key, be issued by the configured issuer (no <c>issuer_account</c> outside operator mode), be
/// within its connect times, and name in <c>aud</c> an account that exists (the placement).
/// </summary>
internal static class AuthCalloutResponse
{
    /// <summary>Where a JWT starts (base64url of <c>{"</c>); anything else from a sealed request is opened first.</summary>
    private static readonly byte[] JwtPrefix = "eyJ"u8.ToArray();

    /// <summary>The user claims and placement account, or false with the reason to log.</summary>
    public static bool TryVerify(
        ReadOnlySpan<byte> payload,
        CalloutExpectation expected,
        AccountRegistry accounts,
        DateTimeOffset now,
        [NotNullWhen(true)] out UserClaims? user,
        [NotNullWhen(true)] out Account? placement,
        out TimeSpan validFor,
        [NotNullWhen(false)] out string? reason)
    {
        reason = Check(payload, expected, accounts, now, out user, out placement, out validFor);
        if (reason is null && user is not null && placement is not null)
        {
            return true;
        }

        reason ??= "auth callout violation: no user";
        reason = char.ToUpperInvariant(reason[0]) + reason[1..];
        return false;
    }

    private static string? Check(ReadOnlySpan<byte> payload, CalloutExpectation expected, AccountRegistry accounts, DateTimeOffset now, out UserClaims? user, out Account? placement, out TimeSpan validFor)
    {
        user = null;
        placement = null;
        validFor = TimeSpan.Zero;
        var account = expected.Account;
        if (payload.IsEmpty)
        {
            return $"auth callout violation: \"no reason supplied\" on account \"{account}\"";
        }

        if (expected.CurveKey is { } curveKey && !payload.StartsWith(JwtPrefix))
        {
            try
            {
                payload = curveKey.Open(payload.ToArray(), expected.ServiceXKey!);
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

        if (!JwtToken.TryDecodeUser(response.Nats.Jwt!, out user, out error))
        {
            return error;
        }

        if ((IsKey(user.Subject, PrefixByte.User) ? ClaimsValidator.CheckUser(user, now) : $"{user.Subject} is not a valid user public key") is { } invalid)
        {
            return "Error validating user JWT: " + invalid;
        }

        if (user.Subject != expected.UserNkey)
        {
            return $"Expected authorized user of \"{expected.UserNkey}\" but got \"{user.Subject}\" on account \"{account}\"";
        }

        if (!ConnectTimes.Allow(user.Nats, now, out validFor))
        {
            return $"authorized user on account \"{account}\" outside of valid connect times";
        }

        if (!string.IsNullOrEmpty(user.Nats.IssuerAccount))
        {
            return $"error non operator mode account \"{account}\": attempted to use issuer_account";
        }

        if (user.Issuer != expected.Issuer)
        {
            return $"wrong issuer for auth callout response on account \"{account}\", expected \"{expected.Issuer}\" got \"{user.Issuer}\"";
        }

        // Outside operator mode the user JWT's audience places the client.
        var name = user.Audience ?? "";
        if (!accounts.TryGet(name, out placement))
        {
            return $"no valid account \"{name}\" for auth callout response on account \"{account}\": account missing";
        }

        return null;
    }

    // NATS.NKeys throws for a key with a bad checksum rather than answering false.
    private static bool IsKey([NotNullWhen(true)] string? key, PrefixByte prefix)
    {
        try
        {
            return JwtToken.IsPublicKey(key, prefix);
        }
        catch (Exception ex) when (ex is NKeysException or ArgumentException or FormatException or IndexOutOfRangeException)
        {
            return false;
        }
    }

    // nats-io/jwt AuthorizationResponseClaims.Validate, then the registered claims' time checks.
    private static string? Validate(AuthorizationResponseClaims response, DateTimeOffset now)
    {
        var fields = response.Nats;
        if (!IsKey(response.Subject, PrefixByte.User))
        {
            return "Subject must be a user public key";
        }

        if (!IsKey(response.Audience, PrefixByte.Server))
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

        if (!string.IsNullOrEmpty(fields.IssuerAccount) && !IsKey(fields.IssuerAccount, PrefixByte.Account))
        {
            return "issuer_account is not an account public key";
        }

        return ClaimsValidator.CheckTimes(response, now);
    }
}
