using Broker.Compare.Load;

namespace Broker.Compare.Rows;

/// <summary>Which side a measurement belongs to.</summary>
internal enum Side
{
    /// <summary>The reference, Go nats-server.</summary>
    NatsServer,

    /// <summary>Our broker.</summary>
    Ours,

    /// <summary>No server (the physical-limit row).</summary>
    Machine,
}

/// <summary>Everything measured for one row: the count used per run, each side's runs and failures.</summary>
internal sealed class RowResult(Row row)
{
    public Row Row { get; } = row;

    /// <summary>Units per run (after calibration), 0 when the row did not run.</summary>
    public long Count { get; set; }

    public Dictionary<Side, List<Measurement>> Runs { get; } = [];

    public Dictionary<Side, List<string>> Errors { get; } = [];

    /// <summary>
    /// Sides that refused the row's configuration as a feature they do not have yet (ours exiting with a "not supported
    /// yet" configuration error), with the server's words: reported, not counted as a failure, and the row runs
    /// unchanged on that side once the feature lands.
    /// </summary>
    public Dictionary<Side, string> NotSupported { get; } = [];

    /// <summary>
    /// Each side's first runs of the row, one per just-started server (the first calibration run, a smaller count):
    /// the row's own pair and the further fresh starts of <c>--first-runs</c>.
    /// </summary>
    public Dictionary<Side, List<Measurement>> First { get; } = [];

    /// <summary>Median ours ÷ median nats-server msgs/s of the first runs, or null.</summary>
    public double? FirstRatio
        => FirstSpreadOf(Side.Ours) is { } ours && FirstSpreadOf(Side.NatsServer) is { } nats ? ours.Median / nats.Median : null;

    public void Add(Side side, Measurement measurement) => Get(Runs, side).Add(measurement);

    /// <summary>Records a first run of a just-started server of <paramref name="side"/>.</summary>
    public void AddFirst(Side side, Measurement measurement) => Get(First, side).Add(measurement);

    /// <summary>Median and range of the side's first-run msgs/s, or null.</summary>
    public Spread? FirstSpreadOf(Side side)
        => First.TryGetValue(side, out var runs) && runs.Count > 0 ? Spread.Of(runs.Select(m => m.MessagesPerSecond)) : null;

    public void Fail(Side side, string error) => Get(Errors, side).Add(error);

    public IReadOnlyList<Measurement> RunsOf(Side side) => Runs.TryGetValue(side, out var runs) ? runs : [];

    public IReadOnlyList<string> ErrorsOf(Side side) => Errors.TryGetValue(side, out var errors) ? errors : [];

    /// <summary>The median of <paramref name="value"/> over the side's successful runs, or null.</summary>
    public Spread? SpreadOf(Side side, Func<Measurement, double> value)
        => RunsOf(side) is { Count: > 0 } runs ? Spread.Of(runs.Select(value)) : null;

    /// <summary>Median ours ÷ median nats-server msgs/s, or null when either side has no successful run.</summary>
    public double? Ratio
        => SpreadOf(Side.Ours, m => m.MessagesPerSecond) is { } ours && SpreadOf(Side.NatsServer, m => m.MessagesPerSecond) is { } nats
            ? ours.Median / nats.Median
            : null;

    /// <summary>
    /// Whether every side the row targets produced at least one run and no failure (ours may instead not support the
    /// row's configuration yet, <see cref="NotSupported"/>).
    /// </summary>
    public bool Succeeded => Row.Target == RowTarget.Machine
        ? Ran(Side.Machine)
        : Ran(Side.NatsServer) && (Ran(Side.Ours) || (NotSupported.ContainsKey(Side.Ours) && ErrorsOf(Side.Ours).Count == 0));

    private bool Ran(Side side) => RunsOf(side).Count > 0 && ErrorsOf(side).Count == 0;

    private static List<T> Get<T>(Dictionary<Side, List<T>> map, Side side)
    {
        if (!map.TryGetValue(side, out var list))
        {
            list = [];
            map[side] = list;
        }

        return list;
    }
}

/// <summary>The connection-scale row for one connection count.</summary>
internal sealed class ScaleResult(int connections)
{
    public int Connections { get; } = connections;

    public Dictionary<Side, List<ScaleMeasurement>> Runs { get; } = [];

    public Dictionary<Side, List<string>> Errors { get; } = [];

    public void Add(Side side, ScaleMeasurement measurement)
    {
        if (!Runs.TryGetValue(side, out var list))
        {
            Runs[side] = list = [];
        }

        list.Add(measurement);
    }

    public void Fail(Side side, string error)
    {
        if (!Errors.TryGetValue(side, out var list))
        {
            Errors[side] = list = [];
        }

        list.Add(error);
    }

    public Spread? SpreadOf(Side side, Func<ScaleMeasurement, double> value)
        => Runs.TryGetValue(side, out var runs) && runs.Count > 0 ? Spread.Of(runs.Select(value)) : null;

    public bool Succeeded => Runs.ContainsKey(Side.NatsServer) && Runs.ContainsKey(Side.Ours) && Errors.Count == 0;
}

/// <summary>Median and range of a set of runs.</summary>
internal sealed record Spread(double Median, double Min, double Max, int Count)
{
    public static Spread Of(IEnumerable<double> values)
    {
        var sorted = values.Order().ToArray();
        if (sorted.Length == 0)
        {
            throw new ArgumentException("No values.", nameof(values));
        }

        var middle = sorted.Length / 2;
        var median = sorted.Length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
        return new Spread(median, sorted[0], sorted[^1], sorted.Length);
    }
}
