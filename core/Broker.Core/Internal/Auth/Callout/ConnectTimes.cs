using Broker.Core.Internal.Jwt;

namespace Broker.Core.Internal.Auth.Callout;

/// <summary>
/// A user JWT's <c>times</c> (daily windows, in <c>times_location</c> or the server's local zone), as nats-server's
/// <c>validateTimes</c>: a window starting today before now and ending after it (the next day when it ends before it
/// starts) allows the connection for the rest of the window; none allows none; no windows allow always.
/// </summary>
internal static class ConnectTimes
{
    /// <summary>Whether the user may connect now, and for how long (<see cref="TimeSpan.Zero"/>: no window limits it).</summary>
    public static bool Allow(UserPermissionLimitsClaim limits, DateTimeOffset now, out TimeSpan validFor)
    {
        validFor = TimeSpan.Zero;
        if (limits.Times is not { Count: > 0 } times)
        {
            return true;
        }

        var zone = TimeZoneInfo.Local;
        if (!string.IsNullOrEmpty(limits.Locale) && !ClaimsValidator.TryFindTimeZone(limits.Locale, out zone))
        {
            return false;
        }

        var local = TimeZoneInfo.ConvertTime(now, zone);
        var today = local.Date;
        foreach (var range in times)
        {
            if (!ClaimsValidator.TryParseTimeOfDay(range.Start ?? "", out var startTime) || !ClaimsValidator.TryParseTimeOfDay(range.End ?? "", out var endTime))
            {
                return false;
            }

            var start = At(today + startTime, zone);
            var end = At(today + (startTime > endTime ? TimeSpan.FromDays(1) : TimeSpan.Zero) + endTime, zone);
            if (start < now && end > now)
            {
                validFor = end - now;
                return true;
            }
        }

        return false;
    }

    private static DateTimeOffset At(DateTime local, TimeZoneInfo zone) => new(local, zone.GetUtcOffset(local));
}
