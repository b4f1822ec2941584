using System.Globalization;
using Broker.Compare.Servers;

namespace Broker.Compare;

/// <summary>The harness's command line.</summary>
internal sealed record CompareOptions
{
    public const string Usage = """
        Broker.Compare: our broker side by side with nats-server, on loopback.

          dotnet run -c Release --project bench/Broker.Compare -- [options]

          --runs N            runs per row and server, alternating the servers run by run (default 5)
          --smoke             tiny counts, one run, no calibration: proves every row works (CI)
          --seconds S         how long the faster server's run should last (default 1.5)
          --rows a,b          only rows whose id starts with one of these (ids: see docs/benchmarks.md)
          --client MODE       lean (raw-socket generator), core (NATS.Client.Core as an application uses it), c
                              (libnats, the C client, as an application uses it), both (lean and core) or all
                              (default: all; each core lean row has twins <row>.core and, over TCP, <row>.c)
          --scale N,M         connection counts of the connection-scale row (default 1000,10000; smoke 20,200)
          --scale-runs N      runs of the connection-scale row per count and server (default 3; smoke 1)
          --no-scale          skip the connection-scale row
          --accounts N        run every chosen row with N accounts on both servers: the row's connections in one
                              (BENCH through no_auth_user, or the import rows' own) and N-1 idle accounts, each with
                              1,000 subscriptions on the row's subjects that must receive nothing (default: the
                              row's own configuration; the restart, leaf node, route and connection-scale rows never
                              take accounts)
          --first-runs N      fresh starts per server for each row's first run (the first row's pair, then N-1
                              more, alternating nats-server and ours): median and min-max (default 3; smoke 1)
          --restart-messages N  1 KiB messages of the restart row's file stream (default 1,000,000: 1 GB; smoke 2,000)
          --out DIR           where benchmarks.md and benchmarks.svg are updated (default docs/; smoke: none)
          --no-write          do not write the report files
          --ours MODE         auto (host, else embedded fallback), host, or embedded (default auto)
          --host-dll PATH     Broker.Host.dll to start (default: host/Broker.Host/bin/<configuration>/net10.0)
          --nats-server PATH  the reference server binary (default: PATH, /usr/sbin; installed with apt-get if missing)
        """;

    public int Runs { get; init; } = 5;

    public bool Smoke { get; init; }

    public double TargetSeconds { get; init; } = 1.5;

    public IReadOnlyList<string> RowFilter { get; init; } = [];

    /// <summary>Which load generators drive the rows; default all three.</summary>
    public ClientMode Client { get; init; } = ClientMode.All;

    public IReadOnlyList<int> ScaleCounts { get; init; } = [1_000, 10_000];

    public int ScaleRuns { get; init; } = 3;

    /// <summary>Accounts every row's servers run with (<c>--accounts N</c>, <see cref="Rows.AccountsConfig"/>); 0: as the row says.</summary>
    public int Accounts { get; init; }

    /// <summary>
    /// Fresh starts per server whose first run of a row is measured (the row's own pair, then this many less one,
    /// alternating): the first-run cells are their median and range.
    /// </summary>
    public int FirstRuns { get; init; } = 3;

    /// <summary>Messages (1 KiB each) of the file stream the restart row restarts with.</summary>
    public long RestartMessages { get; init; } = Load.StreamRestartWorkload.DefaultMessages;

    public string? OutputDirectory { get; init; }

    public bool Write { get; init; } = true;

    public OursMode Ours { get; init; } = OursMode.Auto;

    public string? HostDll { get; init; }

    public string? NatsServerPath { get; init; }

    /// <summary>The arguments as given, for the report's "exact command".</summary>
    public IReadOnlyList<string> Arguments { get; init; } = [];

    /// <summary>Parses the command line; throws <see cref="ArgumentException"/> with a message for a bad one.</summary>
    public static CompareOptions Parse(IReadOnlyList<string> args)
    {
        ArgumentNullException.ThrowIfNull(args);
        var options = new CompareOptions { Arguments = args };
        var scaleGiven = false;
        var scaleRunsGiven = false;
        var firstRunsGiven = false;
        for (var i = 0; i < args.Count; i++)
        {
            var option = args[i];
            string Value() => i + 1 < args.Count ? args[++i] : throw new ArgumentException($"{option} needs a value.");
            options = option switch
            {
                "--runs" => options with { Runs = PositiveInt(Value(), "--runs") },
                "--smoke" => options with { Smoke = true },
                "--client" => options with { Client = Enum.Parse<ClientMode>(Value(), ignoreCase: true) },
                "--seconds" => options with { TargetSeconds = double.Parse(Value(), CultureInfo.InvariantCulture) },
                "--rows" => options with { RowFilter = Value().Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries) },
                "--scale" => options with { ScaleCounts = [.. Value().Split(',').Select(v => PositiveInt(v, "--scale"))] },
                "--scale-runs" => options with { ScaleRuns = PositiveInt(Value(), "--scale-runs") },
                "--no-scale" => options with { ScaleCounts = [] },
                "--accounts" => options with { Accounts = PositiveInt(Value(), "--accounts") },
                "--first-runs" => options with { FirstRuns = PositiveInt(Value(), "--first-runs") },
                "--restart-messages" => options with { RestartMessages = PositiveInt(Value(), "--restart-messages") },
                "--out" => options with { OutputDirectory = Value() },
                "--no-write" => options with { Write = false },
                "--ours" => options with { Ours = Enum.Parse<OursMode>(Value(), ignoreCase: true) },
                "--host-dll" => options with { HostDll = Value() },
                "--nats-server" => options with { NatsServerPath = Value() },
                _ => throw new ArgumentException($"Unknown option {option}."),
            };
            scaleGiven |= option is "--scale" or "--no-scale";
            scaleRunsGiven |= option == "--scale-runs";
            firstRunsGiven |= option == "--first-runs";
        }

        if (options.Smoke)
        {
            options = options with
            {
                Runs = 1,
                ScaleCounts = scaleGiven ? options.ScaleCounts : [20, 200],
                ScaleRuns = scaleRunsGiven ? options.ScaleRuns : 1,
                FirstRuns = firstRunsGiven ? options.FirstRuns : 1,
                Write = options.Write && options.OutputDirectory is not null,
            };
        }

        return options;
    }

    /// <summary>The command that reproduces this run, as the report records it.</summary>
    public string Command => "dotnet run -c Release --project bench/Broker.Compare --" + string.Concat(Arguments.Select(a => " " + a));

    /// <summary>Whether rows of <paramref name="generator"/> run.</summary>
    public bool Includes(Rows.Generator generator) => Client switch
    {
        ClientMode.Lean => generator == Rows.Generator.Lean,
        ClientMode.Core => generator == Rows.Generator.ClientCore,
        ClientMode.C => generator == Rows.Generator.C,
        ClientMode.Both => generator != Rows.Generator.C,
        _ => true,
    };

    private static int PositiveInt(string text, string option)
        => int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var value) && value > 0
            ? value
            : throw new ArgumentException($"{option} needs a positive whole number, not '{text}'.");
}

/// <summary>The <c>--client</c> choice.</summary>
internal enum ClientMode
{
    /// <summary>Every generator: each row, its NATS.Client.Core twin and its C twin.</summary>
    All,

    /// <summary>The lean generator and NATS.Client.Core.</summary>
    Both,

    /// <summary>The lean raw-socket generator only.</summary>
    Lean,

    /// <summary>NATS.Client.Core only.</summary>
    Core,

    /// <summary>The C client (libnats) only.</summary>
    C,
}
