using System.Globalization;
using System.Net;

namespace Broker.Core.Internal.Jwt;

/// <summary>
/// The validity checks nats-server applies after decoding (nats-io/jwt <c>Validate</c> with blocking time checks):
/// expiry and not-before of every claim, and for users the <c>src</c> CIDRs, <c>times</c> ranges and
/// <c>times_location</c>. Each method returns <see langword="null"/> when valid, else the reason (for a debug line).
/// </summary>
internal static class ClaimsValidator
{
    /// <summary>Time format of <c>times</c> (Go's <c>15:04:05</c>).</summary>
    public const string TimeOfDayFormat = @"hh\:mm\:ss";

    /// <summary><c>claim is expired</c> after <c>exp</c>, <c>claim is not yet valid</c> before <c>nbf</c>.</summary>
    public static string? CheckTimes(JwtClaims claims, DateTimeOffset now)
    {
        var seconds = now.ToUnixTimeSeconds();
        if (claims.Expires > 0 && seconds > claims.Expires)
        {
            return "claim is expired";
        }

        if (claims.NotBefore > 0 && claims.NotBefore > seconds)
        {
            return "claim is not yet valid";
        }

        return null;
    }

    /// <summary>The time checks, then the user's limits (<c>src</c>, <c>times</c>, <c>times_location</c>).</summary>
    public static string? CheckUser(UserClaims claims, DateTimeOffset now) =>
        CheckTimes(claims, now) ?? CheckLimits(claims.Nats);

    /// <summary>Source CIDRs, time ranges and time zone of a user or a scope template.</summary>
    public static string? CheckLimits(UserPermissionLimitsClaim limits)
    {
        if (limits.Source is { } source)
        {
            foreach (var cidr in source)
            {
                if (!IPNetwork.TryParse(cidr, out _))
                {
                    return $"invalid cidr \"{cidr}\" in user src limits";
                }
            }
        }

        if (limits.Times is { } times)
        {
            foreach (var range in times)
            {
                if (string.IsNullOrEmpty(range.Start))
                {
                    return "time ranges start must contain a start";
                }

                if (!TryParseTimeOfDay(range.Start, out _))
                {
                    return $"start in time range is invalid \"{range.Start}\"";
                }

                if (string.IsNullOrEmpty(range.End))
                {
                    return "time ranges end must contain an end";
                }

                if (!TryParseTimeOfDay(range.End, out _))
                {
                    return $"end in time range is invalid \"{range.End}\"";
                }
            }
        }

        if (!string.IsNullOrEmpty(limits.Locale) && !TryFindTimeZone(limits.Locale, out _))
        {
            return $"could not parse iana time zone by name: unknown time zone {limits.Locale}";
        }

        return null;
    }

    /// <summary>Parses <c>HH:MM:SS</c> (24 hours).</summary>
    public static bool TryParseTimeOfDay(string text, out TimeSpan time) =>
        TimeSpan.TryParseExact(text, TimeOfDayFormat, CultureInfo.InvariantCulture, out time) && time < TimeSpan.FromDays(1);

    /// <summary>Finds an IANA time zone (<c>Local</c> and <c>UTC</c> as Go's <c>LoadLocation</c> knows them).</summary>
    public static bool TryFindTimeZone(string name, out TimeZoneInfo zone)
    {
        if (name is "" or "UTC")
        {
            zone = TimeZoneInfo.Utc;
            return true;
        }

        if (name == "Local")
        {
            zone = TimeZoneInfo.Local;
            return true;
        }

        return TimeZoneInfo.TryFindSystemTimeZoneById(name, out zone!);
    }

    /// <summary>
    /// Whether <paramref name="subject"/> (a user key, or <c>*</c> for all) issued at <paramref name="issuedAt"/> is
    /// revoked: revocations hold the time before or at which JWTs were issued revoked (nats-server <c>isRevoked</c>).
    /// </summary>
    public static bool IsRevoked(IReadOnlyDictionary<string, long>? revocations, string subject, long issuedAt)
    {
        if (revocations is null || revocations.Count == 0)
        {
            return false;
        }

        return (revocations.TryGetValue(subject, out var at) && at >= issuedAt)
            || (revocations.TryGetValue("*", out var all) && all >= issuedAt);
    }
}
