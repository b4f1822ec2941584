namespace Broker.Core.Internal.Jwt;

/// <summary>
/// A user JWT's <c>times</c> (nats-server <c>validateTimes</c>): daily windows, in <c>times_location</c> or the server's
/// local time, within which the user may connect; a window whose end is before its start runs past midnight.
/// </summary>
internal static class TimeWindow
{
    /// <summary>
    /// How long the user may stay connected from <paramref name="now"/>: <see cref="TimeSpan.MaxValue"/> without
    /// windows, the time to the end of the window it is in, or null outside every window.
    /// </summary>
    public static TimeSpan? ValidFor(UserPermissionLimitsClaim limits, DateTimeOffset now)
    {
        if (limits.Times is not { Count: > 0 } times)
        {
            return TimeSpan.MaxValue;
        }

        var zone = TimeZoneInfo.Local;
        if (!string.IsNullOrEmpty(limits.Locale) && !ClaimsValidator.TryFindTimeZone(limits.Locale, out zone))
        {
            return null;
        }

        var local = TimeZoneInfo.ConvertTime(now, zone);
        foreach (var range in times)
        {
            if (!ClaimsValidator.TryParseTimeOfDay(range.Start ?? "", out var start) || !ClaimsValidator.TryParseTimeOfDay(range.End ?? "", out var end))
            {
                return null;
            }

            var day = new DateTimeOffset(local.Date, local.Offset);
            var startAt = day + start;
            var endAt = day + end;
            if (start > end)
            {
                // As nats-server: the window starts today and ends tomorrow.
                endAt = endAt.AddDays(1);
            }

            if (startAt < local && endAt > local)
            {
                return endAt - local;
            }
        }

        return null;
    }
}
