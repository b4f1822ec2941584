namespace Broker.Compare.Soak;

/// <summary>What one soak run against one server measured.</summary>
internal sealed class SoakResult(string server)
{
    public string Server { get; } = server;

    /// <summary>The idle server before the soak (after one probe client of each protocol came and went).</summary>
    public ProcessSample? Baseline { get; set; }

    /// <summary>The first sample after the warm-up.</summary>
    public ProcessSample? AfterWarmUp { get; set; }

    /// <summary>The last sample while the churn and the traffic ran.</summary>
    public ProcessSample? End { get; set; }

    /// <summary>The server after every client closed (once back to the baseline, or after the wait).</summary>
    public ProcessSample? Closed { get; set; }

    public List<ProcessSample> Samples { get; } = [];

    /// <summary>Descriptors still open after close that the baseline did not have, by kind; empty when none.</summary>
    public string LeftoverDescriptors { get; set; } = string.Empty;

    /// <summary>Of the descriptors after close, those of assemblies first loaded during the run (not left by clients).</summary>
    public int AssemblyDescriptors { get; set; }

    public TimeSpan FillTime { get; set; }

    public TimeSpan ChurnTime { get; set; }

    public long Connects { get; set; }

    public long ConnectFailures { get; set; }

    public string? FirstConnectFailure { get; set; }

    public long Replacements { get; set; }

    public long Published { get; set; }

    public long Delivered { get; set; }

    public long Lost { get; set; }

    public long OutOfOrder { get; set; }

    /// <summary>Why the run stopped early or a steady reader failed; null when it ran through.</summary>
    public string? Error { get; set; }

    /// <summary>Resident memory growth from after the warm-up to the end, in percent.</summary>
    public double? RssGrowthPercent => AfterWarmUp is { Rss: > 0 } warm && End is { } end ? 100.0 * (end.Rss - warm.Rss) / warm.Rss : null;

    public int PeakConnections => Samples.Count == 0 ? 0 : Samples.Max(s => s.Connections);

    public long PeakRss => Samples.Count == 0 ? 0 : Samples.Max(s => s.Rss);

    public int PeakFileDescriptors => Samples.Count == 0 ? 0 : Samples.Max(s => s.FileDescriptors);

    public int PeakThreads => Samples.Count == 0 ? 0 : Samples.Max(s => s.Threads);
}
