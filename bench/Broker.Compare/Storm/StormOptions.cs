using Broker.Compare.Soak;

namespace Broker.Compare.Storm;

/// <summary>The <c>storm</c> command line.</summary>
internal sealed record StormOptions
{
    public const string Usage = """
        Broker.Compare storm: subscribers that stop reading, while fast ones share their subject, against a run without them.

          dotnet run -c Release --project bench/Broker.Compare -- storm [options]

          --stalled N         subscribers that never read, a third each NATS, MQTT and NATS over WebSocket (default 100)
          --fast N            fast subscribers per protocol (NATS, MQTT, NATS over WebSocket) (default 2)
          --seconds S         length of each measured phase (default 15; decimals allowed)
          --payload B         payload bytes per message (default 256)
          --max-pending B     max_pending of both servers, in bytes (default 4194304: 4 MiB)
          --runs N            runs per server, each on a fresh process, servers alternating; the median is reported (default 3)
          --server S          ours, nats-server or both (default both)
          --host-dll PATH     our host's Broker.Host.dll to run (default: this repository's build), to alternate builds
          --no-write          do not update docs/reliability.md
        """;

    public int Stalled { get; init; } = 100;

    public int FastPerProtocol { get; init; } = 2;

    public TimeSpan Phase { get; init; } = TimeSpan.FromSeconds(15);

    public int Payload { get; init; } = 256;

    public long MaxPending { get; init; } = 4L * 1024 * 1024;

    public int Runs { get; init; } = 3;

    public SoakTarget Server { get; init; } = SoakTarget.Both;

    public bool Write { get; init; } = true;

    /// <summary>Our host to run instead of this repository's build (another branch's output, to alternate builds).</summary>
    public string? HostDll { get; init; }

    /// <summary>
    /// How far the publisher may run ahead of the slowest fast subscriber. Big enough to keep every server busy,
    /// small enough (a quarter of max_pending at most) that no fast subscriber is ever a slow consumer itself.
    /// </summary>
    public int Window => (int)Math.Clamp(MaxPending / 4 / (Payload + 64), 64, 20_000);

    /// <summary>The unmeasured warm-up before the baseline phase (JIT, buffers, TCP windows).</summary>
    public TimeSpan WarmUp => Phase / 3;

    /// <summary>The arguments as given, for the report's command line.</summary>
    public IReadOnlyList<string> Arguments { get; init; } = [];

    public string Command => "dotnet run -c Release --project bench/Broker.Compare -- storm" + string.Concat(Arguments.Select(a => " " + a));

    /// <summary>Parses the arguments after <c>storm</c>; throws <see cref="ArgumentException"/> for a bad one.</summary>
    public static StormOptions Parse(IReadOnlyList<string> args)
    {
        ArgumentNullException.ThrowIfNull(args);
        var options = new StormOptions { Arguments = args };
        for (var i = 0; i < args.Count; i++)
        {
            var option = args[i];
            string Value() => i + 1 < args.Count ? args[++i] : throw new ArgumentException($"{option} needs a value.");
            options = option switch
            {
                "--stalled" => options with { Stalled = CommandLineValues.Count(Value(), option, 0) },
                "--fast" => options with { FastPerProtocol = CommandLineValues.Count(Value(), option, 1) },
                "--seconds" => options with { Phase = TimeSpan.FromSeconds(CommandLineValues.PositiveDouble(Value(), option)) },
                "--payload" => options with { Payload = CommandLineValues.Count(Value(), option, 32) },
                "--max-pending" => options with { MaxPending = CommandLineValues.Count(Value(), option, 64 * 1024) },
                "--runs" => options with { Runs = CommandLineValues.Count(Value(), option, 1) },
                "--server" => options with { Server = CommandLineValues.Target(Value()) },
                "--no-write" => options with { Write = false },
                "--host-dll" => options with { HostDll = Value() },
                _ => throw new ArgumentException($"Unknown option {option}."),
            };
        }

        return options;
    }
}
