using System.Text;

namespace Broker.Host.Configuration;

/// <summary>
/// The flags the host accepts: nats-server's spellings (<c>main.go</c>, <c>opts.go ConfigureOptions</c>) mapped onto
/// configuration keys of the <c>Broker</c> section, so flags, appsettings.json and the environment all end up in the
/// same options.
/// </summary>
/// <remarks>
/// A new flag is one line here: a value flag or a switch writing configuration keys, or a <see cref="HostCommand"/>
/// (<c>-t</c>; <c>-sl</c> with its value in <see cref="SignalKey"/>, outside the <c>Broker</c> section).
/// </remarks>
internal static class CommandLineFlags
{
    private const string Server = "Server Options";
    private const string Logging = "Logging Options";
    private const string JetStream = "JetStream Options";
    private const string Authorization = "Authorization Options";
    private const string Tls = "TLS Options";
    private const string Cluster = "Cluster Options";
    private const string Common = "Common Options";

    /// <summary>The key <c>-sl</c> writes its value to; not a setting, so outside the <c>Broker</c> section.</summary>
    public const string SignalKey = "Command:Signal";

    // The usage column where descriptions start, as in nats-server's usage text.
    private const int DescriptionColumn = 37;

    /// <summary>Every flag, in usage order.</summary>
    public static IReadOnlyList<CommandLineFlag> All { get; } =
    [
        new(["-a", "--addr", "--net"], FlagKind.Text, "<host>", "Bind to host address (default: 0.0.0.0)", Server, ["Broker:Host"]),
        new(["-p", "--port"], FlagKind.Integer, "<port>", "Use port for clients (default: 4222; -1 for a random port)", Server, ["Broker:Port"]),
        new(["-n", "--name", "--server_name"], FlagKind.Text, "<server_name>", "Server name (default: auto)", Server, ["Broker:ServerName"]),
        new(["-P", "--pid"], FlagKind.Text, "<file>", "File to store PID", Server, ["Broker:PidFile"]),
        new(["-m", "--http_port"], FlagKind.Integer, "<port>", "Use port for http monitoring (default: off; -1 for a random port)", Server, ["Broker:Monitoring:Port"]),
        new(["-c", "--config"], FlagKind.Text, "<file>", "Configuration file", Server, ["Broker:ConfigFile"]),
        new(["-t"], FlagKind.Switch, "", "Test configuration and exit", Server, [], HostCommand.CheckConfig),
        new(["-sl", "--signal"], FlagKind.Text, "<signal>[=<pid>]", "Send signal to the broker process (ldm, stop, quit, term, reopen, reload); <pid> is a PID or a PID file (default: the -P file)", Server, [SignalKey], HostCommand.Signal),
        new(["--ports_file_dir"], FlagKind.Text, "<dir>", "Creates a ports file in the specified directory (<executable_name>_<pid>.ports)", Server, ["Broker:PortsFileDir"]),
        new(["--plugins"], FlagKind.Text, "<dir>", "Load plugins from this folder (default: plugins/ next to the executable)", Server, ["Broker:PluginsPath"]),
        new(["-l", "--log"], FlagKind.Text, "<file>", "File to redirect log output", Logging, ["Broker:LogFile"]),
        new(["-T", "--logtime"], FlagKind.Switch, "", "Timestamp log entries (default: true)", Logging, ["Broker:LogTime"]),
        new(["-D", "--debug"], FlagKind.Switch, "", "Enable debugging output", Logging, ["Broker:Debug"]),
        new(["-V", "--trace"], FlagKind.Switch, "", "Trace the raw protocol", Logging, ["Broker:Trace"]),
        new(["-VV"], FlagKind.Switch, "", "Verbose trace (same as -V here)", Logging, ["Broker:Trace"]),
        new(["-DV"], FlagKind.Switch, "", "Debug and trace", Logging, ["Broker:Debug", "Broker:Trace"]),
        new(["-DVV"], FlagKind.Switch, "", "Debug and verbose trace (same as -DV here)", Logging, ["Broker:Debug", "Broker:Trace"]),
        new(["-js", "--jetstream"], FlagKind.Switch, "", "Enable JetStream functionality", JetStream, ["Plugins:JetStream:enabled"]),
        new(["-sd", "--store_dir"], FlagKind.Text, "<dir>", "Set the storage directory", JetStream, ["Plugins:JetStream:store_dir"]),
        new(["--user"], FlagKind.Text, "<user>", "User required for connections", Authorization, ["Broker:Authorization:User"]),
        new(["--pass"], FlagKind.Text, "<password>", "Password required for connections", Authorization, ["Broker:Authorization:Password"]),
        new(["--auth"], FlagKind.Text, "<token>", "Authorization token required for connections", Authorization, ["Broker:Authorization:Token"]),
        new(["--tls"], FlagKind.Switch, "", "Enable TLS, do not verify clients (default: false)", Tls, [TlsFlags.EnabledKey]),
        new(["--tlscert"], FlagKind.Text, "<file>", "Server certificate file", Tls, [TlsFlags.CertKey]),
        new(["--tlskey"], FlagKind.Text, "<file>", "Private key for server certificate", Tls, [TlsFlags.KeyKey]),
        new(["--tlsverify"], FlagKind.Switch, "", "Enable TLS, verify client certificates", Tls, [TlsFlags.VerifyKey]),
        new(["--tlscacert"], FlagKind.Text, "<file>", "Client certificate CA for verification", Tls, [TlsFlags.CaCertKey]),
        new(["--routes"], FlagKind.Text, "<rurl-1, rurl-2>", "Routes to solicit and connect", Cluster, [ClusterFlags.Prefix + "routes"]),
        new(["--cluster", "--cluster_listen"], FlagKind.Text, "<cluster-url>", "Cluster URL for solicited routes", Cluster, [ClusterFlags.Prefix + "cluster"]),
        new(["--cluster_name"], FlagKind.Text, "<string>", "Cluster Name, if not set one will be dynamically generated", Cluster, [ClusterFlags.Prefix + "cluster_name"]),
        new(["--no_advertise"], FlagKind.Switch, "", "Do not advertise known cluster information to clients", Cluster, [ClusterFlags.Prefix + "no_advertise"]),
        new(["--cluster_advertise"], FlagKind.Text, "<string>", "Cluster URL to advertise to other servers", Cluster, [ClusterFlags.Prefix + "cluster_advertise"]),
        new(["--connect_retries"], FlagKind.Integer, "<number>", "For implicit routes, number of connect retries", Cluster, [ClusterFlags.Prefix + "connect_retries"]),
        new(["-h", "--help"], FlagKind.Switch, "", "Show this message", Common, [], HostCommand.Help),
        new(["-v", "--version"], FlagKind.Switch, "", "Show version", Common, [], HostCommand.Version),
    ];

    /// <summary>The flag spelled <paramref name="name"/> (without dashes), or <see langword="null"/>.</summary>
    public static CommandLineFlag? Find(string name) => All.FirstOrDefault(f => f.Matches(name));

    /// <summary>The usage text <c>-h</c> prints, laid out as nats-server's.</summary>
    public static string Usage(string executable)
    {
        var text = new StringBuilder();
        text.Append("Usage: ").Append(executable).AppendLine(" [options]");
        foreach (var group in All.GroupBy(f => f.Group))
        {
            text.AppendLine().Append(group.Key).AppendLine(":");
            foreach (var flag in group)
            {
                var names = string.Join(", ", flag.Names);
                var spelled = flag.ValueName.Length == 0 ? names : names + " " + flag.ValueName;

                // nats-server indents long-only flags so the short ones line up.
                var indent = flag.Names[0].StartsWith("--", StringComparison.Ordinal) ? "        " : "    ";
                var left = indent + spelled;
                text.Append(left.Length < DescriptionColumn ? left.PadRight(DescriptionColumn) : left + " ").AppendLine(flag.Description);
            }
        }

        return text.ToString();
    }
}

/// <summary>What a flag takes after its name.</summary>
internal enum FlagKind
{
    /// <summary>A boolean switch: <c>-D</c>, or <c>-D=false</c> to turn it off.</summary>
    Switch,

    /// <summary>A string value: <c>-a HOST</c> or <c>-a=HOST</c>.</summary>
    Text,

    /// <summary>An integer value (checked when parsed, as Go's <c>flag.IntVar</c> does): <c>-p 4222</c>.</summary>
    Integer,
}

/// <summary>What the host does instead of serving, when a flag asks for it.</summary>
internal enum HostCommand
{
    /// <summary>Serve (the default).</summary>
    Run,

    /// <summary>Print the version and exit 0.</summary>
    Version,

    /// <summary>Print the usage and exit 0.</summary>
    Help,

    /// <summary>Check the configuration (<c>-t</c>): exit 0 when it is valid, 1 with its errors otherwise.</summary>
    CheckConfig,

    /// <summary>Send a signal to a running broker (<c>-sl</c>) and exit.</summary>
    Signal,
}

/// <summary>
/// One command-line flag: its spellings, what it takes, and the configuration keys it sets. A flag is a
/// configuration source like appsettings.json, only with the highest precedence, so most flags just name the
/// key(s) they write; a few run a <see cref="HostCommand"/> instead.
/// </summary>
/// <param name="Names">Its spellings as the usage shows them (<c>-p</c>, <c>--port</c>); either dash count is accepted.</param>
/// <param name="Kind">Whether it is a switch or takes a value.</param>
/// <param name="ValueName">The value's placeholder in the usage (<c>&lt;port&gt;</c>); empty for switches.</param>
/// <param name="Description">The usage text.</param>
/// <param name="Group">The usage section it is listed under.</param>
/// <param name="ConfigKeys">The configuration keys it sets to its value (a switch sets <c>true</c>/<c>false</c>).</param>
/// <param name="Command">What it runs instead of serving, if anything.</param>
internal sealed record CommandLineFlag(
    IReadOnlyList<string> Names,
    FlagKind Kind,
    string ValueName,
    string Description,
    string Group,
    IReadOnlyList<string> ConfigKeys,
    HostCommand Command = HostCommand.Run)
{
    /// <summary>Whether <paramref name="name"/> (without dashes) is one of this flag's spellings.</summary>
    public bool Matches(string name) => Names.Any(n => string.Equals(n.TrimStart('-'), name, StringComparison.Ordinal));
}
