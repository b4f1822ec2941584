using System.Globalization;
using System.Text;
using Broker.Compare.Report;
using Broker.Compare.Servers;

namespace Broker.Compare.Soak;

/// <summary>
/// The soak's markdown: one column per server, and the <c>## Soak</c> section of docs/reliability.md (the
/// two-account soak's own section for <c>--accounts</c>), replaced in place (other sections of that file belong to
/// other runs and are kept as they are).
/// </summary>
internal static class SoakReport
{
    public const string Heading = "## Soak";

    /// <summary>The section a two-account soak (<c>--accounts</c>) rewrites, so it never replaces the plain soak's figures.</summary>
    public const string AccountsHeading = "## Two-account soak (issue 20)";

    public static string Render(SoakOptions options, IReadOnlyList<SoakResult> results)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(results);
        var machine = MachineInfo.Collect();
        var text = new StringBuilder();
        text.AppendLine(options.Accounts ? AccountsHeading : Heading).AppendLine();
        text.AppendLine(Invariant($"{options.Nats:N0} NATS connections and {options.Mqtt:N0} MQTT sessions (clean session), one subscription each, replaced at random at {options.Churn:N0} a second (NATS and MQTT alternating: close, reconnect, subscribe again) for {options.Duration.TotalMinutes:0.##} minutes, while one NATS publisher sends {options.Rate:N0} messages a second to {SteadyTraffic.Subjects} subjects that {options.SteadySubscribers} NATS and {options.SteadySubscribers} MQTT (QoS 0) subscribers, never churned, read and check by sequence number. The server is sampled from /proc every {options.SampleInterval.TotalSeconds:0.#} s; memory growth is from the first sample after {options.WarmUp.TotalSeconds:0} s of churn to the last one. The baseline is the idle server after one client of each protocol came and went; \"after close\" is once every client closed and the server's descriptors and threads were back at the baseline, or after 45 s."));
        if (options.Accounts)
        {
            text.AppendLine();
            text.AppendLine($"Two accounts (`--accounts`): account E holds the publisher, the MQTT sessions and half the NATS clients and exports `soak.>` as a stream; account I imports it with the prefix `{SoakAccounts.Prefix[..^1]}`, and every second steady and churned NATS subscriber logs in to I and subscribes to the prefixed subject, so the checked traffic crosses the import and each churned connect and close adds and removes an import subscription.");
        }

        text.AppendLine();
        text.AppendLine(Invariant($"Command: `{options.Command}` ({DateTimeOffset.UtcNow:yyyy-MM-dd HH:mm} UTC, {machine.Cores} cores, {machine.CpuModel}, load average {MachineInfo.LoadAverage()})."));
        var defaults = new SoakOptions();
        if (options.Duration < defaults.Duration || options.Nats < defaults.Nats || options.Mqtt < defaults.Mqtt)
        {
            text.AppendLine();
            text.AppendLine(Invariant($"This run is smaller than the soak `scripts/soak.sh` runs by default ({defaults.Duration.TotalMinutes:0} minutes, {defaults.Nats:N0} NATS connections and {defaults.Mqtt:N0} MQTT sessions, {defaults.Churn} replacements a second); those figures are not shown here. The harness and the server each hold one descriptor per client, and this machine's hard open-file limit is {FileDescriptorLimit.Hard:N0} per process."));
        }

        text.AppendLine();
        text.Append("| |");
        results.ToList().ForEach(r => text.Append(' ').Append(r.Server).Append(" |"));
        text.AppendLine().Append("|---|").AppendLine(string.Concat(results.Select(_ => "---:|")));
        void Row(string name, Func<SoakResult, string> value)
            => text.Append("| ").Append(name).Append(" |").AppendLine(string.Concat(results.Select(r => " " + value(r) + " |")));
        static string Mib(ProcessSample? s) => s is null ? "n/a" : Invariant($"{s.Rss / (1024.0 * 1024):N1}");

        Row("time to open every churned client (s)", r => Invariant($"{r.FillTime.TotalSeconds:N1}"));
        Row("churn achieved (replacements/s)", r => r.ChurnTime > TimeSpan.Zero ? Invariant($"{r.Replacements / r.ChurnTime.TotalSeconds:N0}") : "n/a");
        Row("connects (fill + churn)", r => Invariant($"{r.Connects:N0}"));
        Row("connects failed", r => Invariant($"{r.ConnectFailures:N0}"));
        Row("peak clients", r => Invariant($"{r.PeakConnections:N0}"));
        Row("messages published", r => Invariant($"{r.Published:N0}"));
        Row("delivered to steady subscribers", r => Invariant($"{r.Delivered:N0}"));
        Row("**lost** to steady subscribers", r => Invariant($"**{r.Lost:N0}**"));
        Row("out of order or duplicated", r => Invariant($"{r.OutOfOrder:N0}"));
        Row("RSS baseline (MiB)", r => Mib(r.Baseline));
        Row("RSS after warm-up (MiB)", r => Mib(r.AfterWarmUp));
        Row("RSS at the end (MiB)", r => Mib(r.End));
        Row("**RSS growth after warm-up**", r => r.RssGrowthPercent is { } g ? Invariant($"**{g:+0.0;-0.0}%**") : "n/a");
        Row("RSS peak (MiB)", r => r.Samples.Count == 0 ? "n/a" : Invariant($"{r.PeakRss / (1024.0 * 1024):N1}"));
        Row("RSS after close (MiB)", r => Mib(r.Closed));
        Row("fds: baseline / peak / after close", r => Invariant($"{r.Baseline?.FileDescriptors} / {r.PeakFileDescriptors:N0} / {r.Closed?.FileDescriptors}"));
        Row("descriptors after close not in the baseline", r => r.LeftoverDescriptors.Length == 0 ? "none" : r.LeftoverDescriptors);
        Row("threads: baseline / peak / after close", r => Invariant($"{r.Baseline?.Threads} / {r.PeakThreads} / {r.Closed?.Threads}"));
        foreach (var result in results.Where(r => r.Error is not null || r.FirstConnectFailure is not null))
        {
            text.AppendLine().AppendLine(Invariant($"{result.Server}: {result.Error ?? "first failed connect: " + result.FirstConnectFailure}"));
        }

        return text.ToString();
    }

    private static string Invariant(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);
}
