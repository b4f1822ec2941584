
namespace Broker.Compare.Soak;

/// <summary>Which servers the soak runs against.</summary>
internal enum SoakTarget
{
    /// <summary>Our host (host/Broker.Host with the MQTT plugin).</summary>
    Ours,

    /// <summary>nats-server with JetStream and MQTT.</summary>
    NatsServer,

    /// <summary>nats-server first, then ours.</summary>
    Both,
}

/// <summary>The <c>soak</c> command line.</summary>
internal sealed record SoakOptions
{
    public const string Usage = """
        Broker.Compare soak: connections and MQTT sessions churning for minutes while steady subscribers count every message.

          dotnet run -c Release --project bench/Broker.Compare -- soak [options]

          --minutes M         how long the churn runs after every connection is open (default 10; decimals allowed)
          --nats N            churned NATS connections, one subscription each (default 10000)
          --mqtt N            churned MQTT sessions, one subscription each (default 10000)
          --churn N           connections replaced per second, NATS and MQTT alternating (default 300)
          --rate N            messages per second the publisher sends to the steady subjects (default 1000)
          --server S          ours, nats-server or both (default both)
          --accounts          two accounts: E (the publisher, MQTT, half the NATS clients) exports soak.> as a stream,
                              I imports it with the prefix imp. (half the steady and churned NATS clients); default: none
          --no-write          do not update docs/reliability.md
        """;

    public TimeSpan Duration { get; init; } = TimeSpan.FromMinutes(10);

    public int Nats { get; init; } = 10_000;

    public int Mqtt { get; init; } = 10_000;

    public int Churn { get; init; } = 300;

    public int Rate { get; init; } = 1_000;

    public SoakTarget Server { get; init; } = SoakTarget.Both;

    public bool Write { get; init; } = true;

    /// <summary>Whether the soak runs on two accounts with a stream import between them (<see cref="SoakAccounts"/>); default false.</summary>
    public bool Accounts { get; init; }

    /// <summary>Steady (never churned) subscribers per protocol, each on every steady subject.</summary>
    public int SteadySubscribers { get; init; } = 5;

    /// <summary>The arguments as given, for the report's command line.</summary>
    public IReadOnlyList<string> Arguments { get; init; } = [];

    /// <summary>The warm-up after which resident memory is the reference: the first minute, or a quarter of a shorter run.</summary>
    public TimeSpan WarmUp => Duration / 4 < TimeSpan.FromMinutes(1) ? Duration / 4 : TimeSpan.FromMinutes(1);

    /// <summary>How often the server is sampled: every five seconds, more often in short runs.</summary>
    public TimeSpan SampleInterval => Duration / 20 < TimeSpan.FromSeconds(5) ? Duration / 20 : TimeSpan.FromSeconds(5);

    public string Command => "dotnet run -c Release --project bench/Broker.Compare -- soak" + string.Concat(Arguments.Select(a => " " + a));

    /// <summary>Parses the arguments after <c>soak</c>; throws <see cref="ArgumentException"/> for a bad one.</summary>
    public static SoakOptions Parse(IReadOnlyList<string> args)
    {
        ArgumentNullException.ThrowIfNull(args);
        var options = new SoakOptions { Arguments = args };
        for (var i = 0; i < args.Count; i++)
        {
            var option = args[i];
            string Value() => i + 1 < args.Count ? args[++i] : throw new ArgumentException($"{option} needs a value.");
            options = option switch
            {
                "--minutes" => options with { Duration = TimeSpan.FromMinutes(CommandLineValues.PositiveDouble(Value(), option)) },
                "--nats" => options with { Nats = CommandLineValues.Count(Value(), option) },
                "--mqtt" => options with { Mqtt = CommandLineValues.Count(Value(), option) },
                "--churn" => options with { Churn = CommandLineValues.Count(Value(), option) },
                "--rate" => options with { Rate = Math.Max(1, CommandLineValues.Count(Value(), option)) },
                "--server" => options with { Server = CommandLineValues.Target(Value()) },
                "--no-write" => options with { Write = false },
                "--accounts" => options with { Accounts = true },
                _ => throw new ArgumentException($"Unknown option {option}."),
            };
        }

        return options;
    }
}
