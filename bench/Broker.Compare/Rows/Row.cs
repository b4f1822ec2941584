using Broker.Compare.Load;

namespace Broker.Compare.Rows;

/// <summary>Where a row's load goes.</summary>
internal enum RowTarget
{
    /// <summary>Each server under test in turn (the comparison rows).</summary>
    Servers,

    /// <summary>No server: the physical limit of the machine (loopback TCP).</summary>
    Machine,

    /// <summary>
    /// Each server in turn, stopped and started again on the same store directory: the workload is a
    /// <see cref="StreamRestartWorkload"/> and the runner owns the processes (<c>CompareRunner.Restart.cs</c>).
    /// </summary>
    Restart,
}

/// <summary>Whether a row's load crosses a link between two servers of one kind, which link and which way.</summary>
internal enum ServerLink
{
    /// <summary>One server per side (the default).</summary>
    None,

    /// <summary>A leaf node hub and spoke per side (<c>CompareRunner.Links.cs</c>): publishers on the spoke, subscribers on the hub.</summary>
    SpokeToHub,

    /// <summary>A leaf node hub and spoke per side: publishers on the hub, subscribers on the spoke.</summary>
    HubToSpoke,

    /// <summary>A two-member cluster per side (<c>cluster { routes }</c>): publishers on one member, subscribers on the other.</summary>
    Route,
}

/// <summary>Which load generator drives a row.</summary>
internal enum Generator
{
    /// <summary>The lean raw-socket generator: pipelined frames, no client library between it and the server.</summary>
    Lean,

    /// <summary>NATS.Client.Core, used as an application uses it (PublishAsync, SubscribeAsync, RequestAsync).</summary>
    ClientCore,

    /// <summary>libnats, the official NATS C client, used as an application uses it (natsbench.c).</summary>
    C,
}

/// <summary>
/// One line of the comparison table. A row whose capability is not built yet has no workload and a reason; it is
/// reported as "not available" until its issue gives it a workload (and, for a transport or protocol that needs
/// one, the server configuration both servers are started with).
/// </summary>
internal sealed record Row
{
    /// <summary>A short stable id (command-line filter, subject prefix).</summary>
    public required string Id { get; init; }

    /// <summary>The row's name in the table and the chart.</summary>
    public required string Title { get; init; }

    /// <summary>Payload bytes per message.</summary>
    public int PayloadSize { get; init; }

    /// <summary>Creates the workload; <see langword="null"/> when the capability is not available yet.</summary>
    public Func<IWorkload>? Workload { get; init; }

    /// <summary>Why the row has no workload yet (shown as "not available: ...").</summary>
    public string? NotAvailable { get; init; }

    public RowTarget Target { get; init; } = RowTarget.Servers;

    /// <summary>
    /// Text of a nats-server configuration file both servers are started with (<c>-c</c>) for this row, for
    /// rows that need listeners beyond plain NATS (TLS, WebSocket, MQTT, JetStream); <see langword="null"/> for
    /// the default servers. Placeholders: <c>{ws_port}</c> becomes -1 (a port each server process binds itself and
    /// reports in its ports file), <c>{cert_file}</c> and <c>{key_file}</c> the PEM files of the harness run's self-signed certificate.
    /// Rows with the same text share a pair of servers.
    /// </summary>
    public string? ServerConfig { get; init; }

    /// <summary>
    /// Text of the configuration our server alone is started with, where it differs from <see cref="ServerConfig"/>
    /// (nats-server keeps <see cref="ServerConfig"/>): an option of ours nats-server refuses, such as
    /// <c>jetstream { sync_interval: 2m }</c>, which 2.9.10 does not parse but behaves as always. Same placeholders;
    /// <see langword="null"/> (the default): <see cref="ServerConfig"/> for both.
    /// </summary>
    public string? OursServerConfig { get; init; }

    /// <summary>
    /// What the row's connections speak: bare TCP on the NATS port (default), TLS on the NATS port (the
    /// <see cref="ServerConfig"/> must make it TLS-only with the harness certificate), or WebSocket on the port the
    /// configuration opens at <c>{ws_port}</c>.
    /// </summary>
    public NatsTransport Transport { get; init; } = NatsTransport.Tcp;

    /// <summary>
    /// With a value other than <see cref="ServerLink.None"/>, each side runs the row on two servers of its own kind
    /// linked by <c>leafnodes</c> or <c>cluster</c> routes (the row's <see cref="ServerConfig"/> stays
    /// <see langword="null"/>). Default none.
    /// </summary>
    public ServerLink Link { get; init; }

    /// <summary>The load generator; a <see cref="Generator.ClientCore"/> or <see cref="Generator.C"/> row is the twin of the lean row <see cref="LeanId"/>.</summary>
    public Generator Generator { get; init; } = Generator.Lean;

    /// <summary>The id of the lean row this row repeats with another generator (its own id otherwise).</summary>
    public string LeanId => Generator switch
    {
        Generator.ClientCore when Id.EndsWith(ClientCoreSuffix, StringComparison.Ordinal) => Id[..^ClientCoreSuffix.Length],
        Generator.C when Id.EndsWith(CSuffix, StringComparison.Ordinal) => Id[..^CSuffix.Length],
        _ => Id,
    };

    /// <summary>The suffix of a NATS.Client.Core twin's id.</summary>
    public const string ClientCoreSuffix = ".core";

    /// <summary>The suffix of a C (libnats) twin's id.</summary>
    public const string CSuffix = ".c";

    /// <summary>
    /// A count every run uses instead of a calibrated one (both servers do the same work, and the row measures what it
    /// names, such as reading a 500,000-message stream); <see langword="null"/>: calibrated.
    /// </summary>
    public long? FixedCount { get; init; }

    /// <summary>What one message/unit is, for the table's footnotes.</summary>
    public string Unit { get; init; } = "messages received";

    public bool IsAvailable => Workload is not null;
}
