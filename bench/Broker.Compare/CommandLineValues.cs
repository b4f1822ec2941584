using System.Globalization;
using Broker.Compare.Soak;

namespace Broker.Compare;

/// <summary>The values the soak and storm command lines take, each with its error text.</summary>
internal static class CommandLineValues
{
    /// <summary>A whole number of at least <paramref name="minimum"/>.</summary>
    public static int Count(string text, string option, int minimum = 0)
        => int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var value) && value >= minimum
            ? value
            : throw new ArgumentException(minimum == 0
                ? $"{option} needs a whole number, not '{text}'."
                : $"{option} needs a whole number of at least {minimum}, not '{text}'.");

    /// <summary>A positive decimal number.</summary>
    public static double PositiveDouble(string text, string option)
        => double.TryParse(text, NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out var value) && value > 0
            ? value
            : throw new ArgumentException($"{option} needs a positive number, not '{text}'.");

    /// <summary>The servers a run is for: <c>ours</c>, <c>nats-server</c> or <c>both</c>.</summary>
    public static SoakTarget Target(string text) => text switch
    {
        "ours" => SoakTarget.Ours,
        "nats-server" => SoakTarget.NatsServer,
        "both" => SoakTarget.Both,
        _ => throw new ArgumentException($"--server is ours, nats-server or both, not '{text}'."),
    };
}
