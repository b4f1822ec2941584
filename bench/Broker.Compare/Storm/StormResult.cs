namespace Broker.Compare.Storm;

/// <summary>What one storm run against one server measured.</summary>
internal sealed class StormResult(string server)
{
    public string Server { get; } = server;

    /// <summary>The phase without stalled peers.</summary>
    public StormPhase Baseline { get; } = new();

    /// <summary>The phase that begins as the stalled peers connect.</summary>
    public StormPhase Storm { get; } = new();

    /// <summary>Fast subscribers (all protocols).</summary>
    public int FastSubscribers { get; set; }

    /// <summary>How long opening every stalled subscriber took.</summary>
    public TimeSpan OpenTime { get; set; }

    /// <summary>From the first stalled subscriber's connect until /varz counted every one as a slow consumer; null if that never happened.</summary>
    public TimeSpan? AllCutOffAfter { get; set; }

    /// <summary>/varz <c>slow_consumers</c> after the storm.</summary>
    public long SlowConsumers { get; set; }

    /// <summary>Close reasons of the closed connections (/connz?state=closed), by reason.</summary>
    public Dictionary<string, int> CloseReasons { get; } = [];

    public IReadOnlyList<StalledOutcome> Stalled { get; set; } = [];

    public long Published { get; set; }

    public long Delivered { get; set; }

    public long Lost { get; set; }

    public long OutOfOrder { get; set; }

    /// <summary>Resident memory of the idle server with the fast traffic connected.</summary>
    public long IdleRss { get; set; }

    public string? Error { get; set; }

    /// <summary>Fast subscribers' throughput in the storm as a share of the baseline's.</summary>
    public double? Kept => Baseline.Rate > 0 && Storm.Rate > 0 ? Storm.Rate / Baseline.Rate : null;
}

/// <summary>One measured phase: fast subscribers' messages over time, and the server's peak memory.</summary>
internal sealed class StormPhase
{
    /// <summary>Messages per second per fast subscriber over the whole phase.</summary>
    public double Rate { get; set; }

    /// <summary>The lowest rate per fast subscriber over any one-second window of the phase.</summary>
    public double WorstSecond { get; set; }

    public long PeakRss { get; set; }

    /// <summary>Messages per second per fast subscriber, second by second.</summary>
    public List<double> BySecond { get; } = [];
}
