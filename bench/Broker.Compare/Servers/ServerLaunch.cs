using System.Security.Cryptography.X509Certificates;

namespace Broker.Compare.Servers;

/// <summary>
/// How to start one server: the program and arguments, with <c>{port}</c> standing for the NATS port (-1 when
/// started: the program must take nats-server's <c>--ports_file_dir</c>), and
/// optionally a configuration file to give it.
/// </summary>
internal sealed record ServerLaunch(string Name, string FileName, IReadOnlyList<string> Arguments, string Description)
{
    /// <summary>The placeholder a <see cref="Config"/> uses for the WebSocket port, -1 in the file: bound by the process itself.</summary>
    public const string WebSocketPortPlaceholder = "{ws_port}";

    /// <summary>The placeholder a <see cref="Config"/> uses for the leaf node port bound by the process (<c>leafnodes { listen }</c>).</summary>
    public const string LeafPortPlaceholder = "{leaf_port}";

    /// <summary>The placeholder a <see cref="Config"/> uses for the cluster port bound by the process (<c>cluster { listen }</c>).</summary>
    public const string RoutePortPlaceholder = "{route_port}";

    /// <summary>The placeholder a <see cref="Config"/> uses for the monitoring port bound by the process (<c>http</c>).</summary>
    public const string HttpPortPlaceholder = "{http_port}";

    /// <summary>Replaced by a fresh temporary folder per server process (JetStream's <c>store_dir</c>).</summary>
    public const string StoreDirPlaceholder = "{store_dir}";

    /// <summary>
    /// Text of a nats-server configuration file, written afresh for every process and passed with <c>-c</c>;
    /// each port placeholder becomes -1 (nats-server's random port), and the ports the process bound are read back
    /// from its ports file (<see cref="BoundPorts"/>). Default <see langword="null"/>: no file.
    /// </summary>
    public string? Config { get; init; }

    /// <summary>
    /// Set when <see cref="Config"/> makes the NATS port TLS-only: the certificate the server presents, which
    /// clients (the readiness probe included) pin. Default <see langword="null"/>: the NATS port is clear text.
    /// </summary>
    public X509Certificate2? TlsCertificate { get; init; }
}
