using Broker.Compare.Rows;

namespace Broker.Compare.Report;

/// <summary>Everything one harness run produced: what ran where, each row's results, and notes for the reader.</summary>
internal sealed class CompareReport
{
    public required CompareOptions Options { get; init; }

    public DateTimeOffset StartedAt { get; init; } = DateTimeOffset.UtcNow;

    public DateTimeOffset FinishedAt { get; set; }

    public MachineInfo Machine { get; init; } = MachineInfo.Collect();

    public string LoadBefore { get; init; } = MachineInfo.LoadAverage();

    public string LoadAfter { get; set; } = "";

    /// <summary>nats-server's version as it reports it.</summary>
    public string NatsServerVersion { get; set; } = "";

    /// <summary>How nats-server was started.</summary>
    public string NatsServerDescription { get; set; } = "";

    /// <summary>Our broker's version (INFO <c>broker_version</c>).</summary>
    public string OursVersion { get; set; } = "";

    /// <summary>How our broker was started (host or embedded fallback).</summary>
    public string OursDescription { get; set; } = "";

    public List<RowResult> Rows { get; } = [];

    public List<ScaleResult> Scale { get; } = [];

    /// <summary>Warnings the reader must see (fallbacks, failures).</summary>
    public List<string> Notes { get; } = [];

    /// <summary>Whether every row that could run did, on every side, without a failure.</summary>
    public bool Succeeded => Rows.All(r => !r.Row.IsAvailable || r.Succeeded) && Scale.All(s => s.Succeeded);
}
