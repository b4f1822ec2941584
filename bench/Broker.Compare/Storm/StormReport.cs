using System.Globalization;
using System.Text;
using Broker.Compare.Report;

namespace Broker.Compare.Storm;

/// <summary>The storm's markdown: one column per server, the <c>## Slow-consumer storm</c> section of docs/reliability.md.</summary>
internal static class StormReport
{
    public const string Heading = "## Slow-consumer storm";

    public static string Render(StormOptions options, IReadOnlyList<StormResult> results)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(results);
        var machine = MachineInfo.Collect();
        var bound = options.Stalled * options.MaxPending;
        var text = new StringBuilder();
        text.AppendLine(Heading).AppendLine();
        text.AppendLine(Invariant($"Both servers run the same configuration file (NATS, MQTT, WebSocket and monitoring listeners, JetStream, `max_pending: {options.MaxPending}` = {options.MaxPending / (1024.0 * 1024):0.##} MiB, which bounds what a server may hold for one subscriber). One NATS publisher sends {options.Payload}-byte messages to 4 subjects as fast as the slowest fast subscriber reads (never more than {options.Window:N0} messages ahead of it); {options.FastPerProtocol} NATS, {options.FastPerProtocol} MQTT (QoS 0) and {options.FastPerProtocol} NATS-over-WebSocket subscribers read every message and check it by sequence number. After {options.WarmUp.TotalSeconds:0.#} s of warm-up the fast subscribers are measured alone for {options.Phase.TotalSeconds:0.#} s; then {options.Stalled} subscribers on the same subjects (a third each NATS, MQTT and NATS over WebSocket, 4 KiB kernel receive buffers) connect all at once and never read, and the fast subscribers are measured for another {options.Phase.TotalSeconds:0.#} s from that moment. Afterwards each stalled subscriber is read until the server's close, or until 3 s pass without a byte (not cut off). Each server ran {options.Runs} time(s), each time a fresh process, the servers alternating; the table shows the run with the median share kept. Memory is the server's resident set sampled every 250 ms; the bound is stalled subscribers × max_pending = {bound / (1024.0 * 1024):N0} MiB above the run without them."));
        text.AppendLine();
        text.AppendLine(Invariant($"Command: `{options.Command}` ({DateTimeOffset.UtcNow:yyyy-MM-dd HH:mm} UTC, {machine.Cores} cores, {machine.CpuModel}, load average {MachineInfo.LoadAverage()})."));
        text.AppendLine();
        // Per server, the run whose kept share is the median stands for it; every run's share is listed too.
        var runs = results.GroupBy(r => r.Server).ToList();
        var all = runs.ToDictionary(g => g.Key, g => g.ToList());
        results = runs.Select(g => g.OrderBy(r => r.Kept ?? -1).ElementAt((g.Count() - 1) / 2)).ToList();
        text.Append("| |");
        results.ToList().ForEach(r => text.Append(' ').Append(r.Server).Append(" |"));
        text.AppendLine().Append("|---|").AppendLine(string.Concat(results.Select(_ => "---:|")));
        void Row(string name, Func<StormResult, string> value)
            => text.Append("| ").Append(name).Append(" |").AppendLine(string.Concat(results.Select(r => " " + value(r) + " |")));
        static string Mib(long bytes) => Invariant($"{bytes / (1024.0 * 1024):N1}");

        Row("fast subscribers alone (msgs/s each)", r => Invariant($"{r.Baseline.Rate:N0}"));
        Row("fast subscribers during the storm (msgs/s each)", r => Invariant($"{r.Storm.Rate:N0}"));
        Row("**throughput kept during the storm**", r => r.Kept is { } kept ? Invariant($"**{kept:P0}**") : "n/a");
        Row("kept in each run", r => string.Join(", ", all[r.Server].Select(x => x.Kept is { } k ? Invariant($"{k:P0}") : "failed")));
        Row("worst second alone / during the storm (msgs/s each)", r => Invariant($"{r.Baseline.WorstSecond:N0} / {r.Storm.WorstSecond:N0}"));
        Row("messages published", r => Invariant($"{r.Published:N0}"));
        Row("**lost** to fast subscribers", r => Invariant($"**{r.Lost:N0}**"));
        Row("out of order or duplicated", r => Invariant($"{r.OutOfOrder:N0}"));
        foreach (var protocol in StalledPeers.Protocols)
        {
            Row(Invariant($"stalled {protocol} subscribers cut off"), r => Invariant($"{r.Stalled.Count(s => s.Protocol == protocol && s.CutOff)} of {r.Stalled.Count(s => s.Protocol == protocol)}"));
        }

        Row("all stalled counted as slow consumers after (s, from their first connect)", r => r.AllCutOffAfter is { } t ? Invariant($"{t.TotalSeconds:N1}") : "never");
        Row("time to connect every stalled subscriber (s)", r => Invariant($"{r.OpenTime.TotalSeconds:N2}"));
        Row("/varz slow_consumers", r => Invariant($"{r.SlowConsumers}"));
        Row("close reasons (/connz?state=closed)", r => r.CloseReasons.Count == 0 ? "none" : string.Join("; ", r.CloseReasons.OrderByDescending(p => p.Value).Select(p => Invariant($"{p.Key}: {p.Value}"))));
        Row("stalled: bytes read at the end (mean KiB each)", r => r.Stalled.Count == 0 ? "n/a" : Invariant($"{r.Stalled.Average(s => s.BytesDrained) / 1024:N0}"));
        Row("RSS with the fast traffic connected, idle (MiB)", r => Mib(r.IdleRss));
        Row("RSS peak alone (MiB)", r => Mib(r.Baseline.PeakRss));
        Row("RSS peak during the storm (MiB)", r => Mib(r.Storm.PeakRss));
        Row(Invariant($"**storm peak above alone** (bound {bound / (1024.0 * 1024):N0} MiB)"), r => Invariant($"**{Mib(Math.Max(0, r.Storm.PeakRss - r.Baseline.PeakRss))}**"));
        foreach (var result in all.Values.SelectMany(r => r).Where(r => r.Error is not null))
        {
            text.AppendLine().AppendLine(Invariant($"{result.Server}: {result.Error}"));
        }

        return text.ToString();
    }

    private static string Invariant(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);
}
