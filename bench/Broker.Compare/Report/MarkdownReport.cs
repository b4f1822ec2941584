using System.Globalization;
using System.Text;
using Broker.Compare.Rows;

namespace Broker.Compare.Report;

/// <summary>
/// The generated part of docs/benchmarks.md: how and where the comparison ran, the throughput table with the
/// ratio ours ÷ nats-server, request latency, and the connection-scale table.
/// </summary>
internal static class MarkdownReport
{
    public static string Render(CompareReport report, string chartFileName)
    {
        ArgumentNullException.ThrowIfNull(report);
        var text = new StringBuilder();
        var machine = report.Machine;
        Line(text, $"### Comparison of {report.StartedAt:yyyy-MM-dd HH:mm} UTC");
        Line(text);
        Line(text, $"- Command: `{report.Options.Command}` ({(report.FinishedAt - report.StartedAt).TotalMinutes:0.0} min)");
        Line(text, $"- Machine: {machine.Cores} cores ({machine.CpuModel}), {machine.MemoryBytes / (1024.0 * 1024 * 1024):0.0} GiB memory, {machine.OperatingSystem}, {machine.DotNet}");
        Line(text, $"- nats-server: {report.NatsServerDescription}");
        Line(text, $"- Ours: broker {report.OursVersion}, {report.OursDescription}");
        Line(text, $"- Load average (1, 5, 15 min) before: {report.LoadBefore}; after: {report.LoadAfter}");
        Line(text, $"- Runs per row and server: {report.Options.Runs}{(report.Options.Smoke ? " (smoke: tiny counts, numbers meaningless)" : string.Empty)}; cells are median (min–max)");
        foreach (var note in report.Notes)
        {
            Line(text, $"- **Note:** {note}");
        }

        Line(text);
        Line(text, $"![ours ÷ nats-server per row]({chartFileName})");
        Line(text);
        Throughput(text, report);
        Generators(text, report);
        FirstRuns(text, report);
        Latency(text, report);
        Scale(text, report);
        Failures(text, report);
        return text.ToString();
    }

    private static void Throughput(StringBuilder text, CompareReport report)
    {
        var loopback = report.Rows.FirstOrDefault(r => r.Row.Target == RowTarget.Machine)?.SpreadOf(Side.Machine, m => m.MegabytesPerSecond)?.Median;
        Line(text, "| Row | Per run | nats-server msgs/s | ours msgs/s | ours ÷ nats-server | nats-server MB/s | ours MB/s | share of loopback MB/s (nats-server / ours) | server CPU ns/msg (nats-server / ours) | CPU ours ÷ nats-server |");
        Line(text, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        foreach (var result in report.Rows)
        {
            var row = result.Row;
            if (!row.IsAvailable)
            {
                Line(text, $"| {row.Title} | | not available | not available | n/a | | | | | |");
                continue;
            }

            if (row.Target == RowTarget.Machine)
            {
                Line(text, $"| {row.Title} | {Count(result.Count)} | {Rate(result.SpreadOf(Side.Machine, m => m.MessagesPerSecond))} writes/s | | | {Rate(result.SpreadOf(Side.Machine, m => m.MegabytesPerSecond))} | | 100% | | |");
                continue;
            }

            var natsMb = result.SpreadOf(Side.NatsServer, m => m.MegabytesPerSecond);
            var oursMb = result.SpreadOf(Side.Ours, m => m.MegabytesPerSecond);
            var share = loopback is > 0 ? $"{Percent(natsMb?.Median / loopback)} / {Percent(oursMb?.Median / loopback)}" : string.Empty;
            var natsCpu = result.SpreadOf(Side.NatsServer, m => m.ServerCpuNanosecondsPerMessage ?? double.NaN)?.Median;
            var oursCpu = result.SpreadOf(Side.Ours, m => m.ServerCpuNanosecondsPerMessage ?? double.NaN)?.Median;
            var notSupported = result.NotSupported.ContainsKey(Side.Ours);
            var oursRate = notSupported ? "not supported yet" : Rate(result.SpreadOf(Side.Ours, m => m.MessagesPerSecond));
            var oursMbText = notSupported ? "not supported yet" : Rate(oursMb);
            Line(text, $"| {row.Title}{FailureMark(result)} | {Count(result.Count)} | {Rate(result.SpreadOf(Side.NatsServer, m => m.MessagesPerSecond))} | {oursRate} | {Ratio(result.Ratio)} | {Rate(natsMb)} | {oursMbText} | {share} | {Nanos(natsCpu)} / {Nanos(oursCpu)} | {Ratio(oursCpu / natsCpu)} |");
        }

        Line(text);
        Line(text, "Per run: the calibrated count (messages published; requests per client for request/reply; 16 KB writes for loopback). "
            + "msgs/s counts messages received by all subscribers together (published messages for publish-only rows, completed round trips for request/reply); MB/s is payload bytes of those messages. Server CPU is the server process's user + system time during the run divided by those messages: it is far less sensitive to other load on the machine than msgs/s (lower is better).");
        Line(text);
    }

    /// <summary>Each row's ratio with the lean generator beside its ratios with NATS.Client.Core and the C client.</summary>
    private static void Generators(StringBuilder text, CompareReport report)
    {
        var leanIds = report.Rows
            .Where(r => r.Row.Generator != Generator.Lean && r.Row.IsAvailable)
            .Select(r => r.Row.LeanId)
            .Distinct(StringComparer.Ordinal)
            .ToList();
        if (leanIds.Count == 0)
        {
            return;
        }

        Line(text, "| Row | lean generator: nats-server / ours msgs/s | ours ÷ nats-server | NATS.Client.Core: nats-server / ours msgs/s | ours ÷ nats-server | C client: nats-server / ours msgs/s | ours ÷ nats-server |");
        Line(text, "|---|---:|---:|---:|---:|---:|---:|");
        foreach (var id in leanIds)
        {
            var lean = Find(id, Generator.Lean);
            var core = Find(id, Generator.ClientCore);
            var c = Find(id, Generator.C);
            Line(text, $"| {lean?.Row.Title ?? id} | {Pair(lean)} | {Ratio(lean?.Ratio)} | {Pair(core)} | {Ratio(core?.Ratio)} | {Pair(c)} | {Ratio(c?.Ratio)} |");
        }

        Line(text);
        Line(text, "The lean generator pipelines raw protocol frames, so it measures the server; NATS.Client.Core is driven as an application drives it (awaiting PublishAsync per message, `await foreach` over SubscribeAsync, RequestAsync), so its rows show what a .NET application sees, where the client's own per-message cost takes a share of the machine. The C client (libnats 3, `bench/Broker.Compare/Load/C/natsbench.c`) is a third, independent generator: `natsConnection_Publish` in a thread per publisher, asynchronous subscription callbacks without pending limits, `natsConnection_Request` one at a time with `SendAsap` connections. TLS and WebSocket rows have no C twin.");
        Line(text);

        RowResult? Find(string id, Generator generator) => report.Rows.FirstOrDefault(r => r.Row.LeanId == id && r.Row.Generator == generator);

        static string Pair(RowResult? result) => result is null
            ? "-"
            : $"{Short(result.SpreadOf(Side.NatsServer, m => m.MessagesPerSecond)?.Median)} / {Short(result.SpreadOf(Side.Ours, m => m.MessagesPerSecond)?.Median)}";
    }

    /// <summary>The first run of each row on a just-started server, beside the warmed-up median.</summary>
    private static void FirstRuns(StringBuilder text, CompareReport report)
    {
        var rows = report.Rows.Where(r => r.First.Count > 0 && r.Row.Target == RowTarget.Servers).ToList();
        if (rows.Count == 0)
        {
            return;
        }

        Line(text, "| First run on a fresh server | count | fresh starts | nats-server msgs/s | ours msgs/s | ours ÷ nats-server | warmed-up median ours ÷ nats-server |");
        Line(text, "|---|---:|---:|---:|---:|---:|---:|");
        foreach (var result in rows)
        {
            var count = result.First.Values.First()[0].Messages;
            var starts = result.First.Values.Max(runs => runs.Count);
            Line(text, $"| {result.Row.Title} | {Short(count)} | {starts} | {Rate(result.FirstSpreadOf(Side.NatsServer))} | {Rate(result.FirstSpreadOf(Side.Ours))} | {Ratio(result.FirstRatio)} | {Ratio(result.Ratio)} |");
        }

        Line(text);
        Line(text, "Each row starts both servers afresh; its first run (the first calibration run, a smaller count) is what a short-lived test process sees: JIT compilation, thread pool growth and first-time allocations included. With `--first-runs N` (default 3) each server is started N times per row, alternating, and the cells are the median of those first runs (min–max).");
        Line(text);
    }

    private static void Latency(StringBuilder text, CompareReport report)
    {
        var rows = report.Rows.Where(r => r.Row.IsAvailable && r.RunsOf(Side.Ours).Concat(r.RunsOf(Side.NatsServer)).Any(m => m.Latency is not null)).ToList();
        if (rows.Count == 0)
        {
            return;
        }

        Line(text, "| Request/reply round trip (µs) | nats-server p50 | nats-server p99 | ours p50 | ours p99 |");
        Line(text, "|---|---:|---:|---:|---:|");
        foreach (var result in rows)
        {
            var ours = result.NotSupported.ContainsKey(Side.Ours)
                ? "not supported yet | not supported yet"
                : $"{Micro(result.SpreadOf(Side.Ours, m => m.Latency!.P50Microseconds))} | {Micro(result.SpreadOf(Side.Ours, m => m.Latency!.P99Microseconds))}";
            Line(text, $"| {result.Row.Title} | {Micro(result.SpreadOf(Side.NatsServer, m => m.Latency!.P50Microseconds))} | {Micro(result.SpreadOf(Side.NatsServer, m => m.Latency!.P99Microseconds))} | {ours} |");
        }

        Line(text);
    }

    private static void Scale(StringBuilder text, CompareReport report)
    {
        if (report.Scale.Count == 0)
        {
            return;
        }

        Line(text, "| Idle connections (1 SUB each) | nats-server RSS/connection | ours RSS/connection | ours ÷ nats-server | nats-server connect all | ours connect all | ours ÷ nats-server |");
        Line(text, "|---|---:|---:|---:|---:|---:|---:|");
        foreach (var scale in report.Scale)
        {
            var natsMemory = scale.SpreadOf(Side.NatsServer, m => m.BytesPerConnection / 1024);
            var oursMemory = scale.SpreadOf(Side.Ours, m => m.BytesPerConnection / 1024);
            var natsTime = scale.SpreadOf(Side.NatsServer, m => m.ConnectTime.TotalMilliseconds);
            var oursTime = scale.SpreadOf(Side.Ours, m => m.ConnectTime.TotalMilliseconds);
            Line(text, $"| {scale.Connections:N0} | {Kib(natsMemory)} | {Kib(oursMemory)} | {Ratio(oursMemory?.Median / natsMemory?.Median)} | {Ms(natsTime)} | {Ms(oursTime)} | {Ratio(oursTime?.Median / natsTime?.Median)} |");
        }

        Line(text);
        Line(text, "RSS/connection is (VmRSS after − VmRSS before) ÷ connections of a freshly started server; connect all is the time until every connection's CONNECT + SUB + PING was answered with PONG (8 connecting threads). Lower is better for both.");
        Line(text);
    }

    private static void Failures(StringBuilder text, CompareReport report)
    {
        var failures = report.Rows.SelectMany(r => r.Errors.SelectMany(e => e.Value.Select(message => $"{r.Row.Id} on {CompareRunner.Name(e.Key)}: {message}")))
            .Concat(report.Scale.SelectMany(s => s.Errors.SelectMany(e => e.Value.Select(message => $"scale {s.Connections} on {CompareRunner.Name(e.Key)}: {message}"))))
            .Distinct()
            .ToList();
        var notSupported = report.Rows.SelectMany(r => r.NotSupported.Select(n => $"{r.Row.Id} on {CompareRunner.Name(n.Key)}: {n.Value}")).ToList();
        if (notSupported.Count > 0)
        {
            Line(text, "Not supported yet (the row ran on the other side alone; no failure):");
            Line(text);
            foreach (var line in notSupported)
            {
                Line(text, $"- {line.ReplaceLineEndings(" ")}");
            }

            Line(text);
        }

        if (failures.Count == 0)
        {
            return;
        }

        Line(text, "Failures:");
        Line(text);
        foreach (var failure in failures)
        {
            Line(text, $"- {failure.ReplaceLineEndings(" ")}");
        }

        Line(text);
    }

    /// <summary>" (failed runs: ours 1)" after a row title, so a median over fewer runs is never mistaken for a clean result.</summary>
    private static string FailureMark(RowResult result)
    {
        var failed = result.Errors.Where(e => e.Value.Count > 0).Select(e => $"{CompareRunner.Name(e.Key)} {e.Value.Count}").ToList();
        return failed.Count == 0 ? string.Empty : $" (failed runs: {string.Join(", ", failed)})";
    }

    private static string Rate(Spread? spread)
        => spread is null ? "failed" : spread.Count == 1 ? Short(spread.Median) : $"{Short(spread.Median)} ({Short(spread.Min)}–{Short(spread.Max)})";

    private static string Micro(Spread? spread) => spread is null ? "failed" : Invariant($"{spread.Median:N0}");

    private static string Kib(Spread? spread)
        => spread is null ? "failed" : spread.Count == 1 ? Invariant($"{spread.Median:N1} KiB") : Invariant($"{spread.Median:N1} KiB ({spread.Min:N1}–{spread.Max:N1})");

    private static string Ms(Spread? spread)
        => spread is null ? "failed" : spread.Count == 1 ? Invariant($"{spread.Median:N0} ms") : Invariant($"{spread.Median:N0} ms ({spread.Min:N0}–{spread.Max:N0})");

    private static string Ratio(double? ratio) => ratio is { } value && double.IsFinite(value) ? Invariant($"**{value:0.00}**") : "n/a";

    private static string Percent(double? share) => share is { } value ? Invariant($"{value * 100:0.#}%") : "-";

    private static string Nanos(double? nanoseconds) => nanoseconds is { } value && double.IsFinite(value) ? Short(value) : "-";

    private static string Count(long count) => count == 0 ? string.Empty : Short(count);

    private static string Short(double? value) => value is { } known ? Short(known) : "failed";

    /// <summary>1.23 M, 45.6 k, 789: three significant digits are all a loaded machine can support.</summary>
    public static string Short(double value) => value switch
    {
        >= 1e9 => Invariant($"{value / 1e9:0.00} G"),
        >= 1e6 => Invariant($"{value / 1e6:0.00} M"),
        >= 1e4 => Invariant($"{value / 1e3:0.0} k"),
        >= 100 => Invariant($"{value:0}"),
        _ => Invariant($"{value:0.0}"),
    };

    private static string Invariant(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);

    private static void Line(StringBuilder text, string line = "") => text.Append(line).Append('\n');
}
