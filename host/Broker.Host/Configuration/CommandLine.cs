using System.Globalization;

namespace Broker.Host.Configuration;

/// <summary>
/// The parsed command line: what to do, and the configuration keys the flags set (the highest-precedence
/// configuration layer).
/// </summary>
/// <remarks>
/// Parsed by hand rather than with Microsoft.Extensions.Configuration.CommandLine, which has no boolean switches
/// (<c>-D -p 1</c> would read "-p" as the value of D) and silently ignores unknown single-dash flags. The rules are
/// Go's <c>flag</c> package, which nats-server uses: one or two dashes, <c>-name value</c> or <c>-name=value</c>,
/// switches take no separate value (<c>-D=false</c> turns one off), a value flag takes the next argument even when
/// it starts with a dash (<c>-p -1</c>), <c>--</c> ends the flags. A bare argument may be <c>version</c> or
/// <c>help</c>, as in nats-server.
/// </remarks>
internal sealed class CommandLine
{
    private CommandLine(HostCommand command, IReadOnlyDictionary<string, string?> settings, string? error)
    {
        Command = command;
        Settings = settings;
        Error = error;
    }

    /// <summary>What the host should do.</summary>
    public HostCommand Command { get; }

    /// <summary>Configuration keys set by flags (later flags win).</summary>
    public IReadOnlyDictionary<string, string?> Settings { get; }

    /// <summary>Why the command line is not valid (one line naming the flag), or <see langword="null"/>.</summary>
    public string? Error { get; }

    /// <summary>Parses the arguments.</summary>
    /// <param name="args">The process arguments.</param>
    /// <returns>The result; check <see cref="Error"/> first.</returns>
    public static CommandLine Parse(IReadOnlyList<string> args)
    {
        ArgumentNullException.ThrowIfNull(args);
        var settings = new Dictionary<string, string?>(StringComparer.OrdinalIgnoreCase);
        var command = HostCommand.Run;
        for (var i = 0; i < args.Count; i++)
        {
            var arg = args[i];
            if (arg == "--")
            {
                return Positional(args, i + 1, command, settings);
            }

            if (arg.Length < 2 || arg[0] != '-')
            {
                return Positional(args, i, command, settings);
            }

            var body = arg.StartsWith("--", StringComparison.Ordinal) ? arg[2..] : arg[1..];
            if (body.Length == 0 || body[0] is '-' or '=')
            {
                return Failed($"bad flag syntax: {arg}");
            }

            var equals = body.IndexOf('=', StringComparison.Ordinal);
            var name = equals < 0 ? body : body[..equals];
            var inlineValue = equals < 0 ? null : body[(equals + 1)..];
            var flag = CommandLineFlags.Find(name);
            if (flag is null)
            {
                return Failed($"flag provided but not defined: -{name}");
            }

            string value;
            if (flag.Kind == FlagKind.Switch)
            {
                if (!TryParseBool(inlineValue ?? "true", out var on))
                {
                    return Failed($"invalid boolean value \"{inlineValue}\" for -{name}: parse error");
                }

                value = on ? "true" : "false";
            }
            else
            {
                if (inlineValue is null)
                {
                    if (i + 1 >= args.Count)
                    {
                        return Failed($"flag needs an argument: -{name}");
                    }

                    inlineValue = args[++i];
                }

                if (flag.Kind == FlagKind.Integer && !int.TryParse(inlineValue, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out _))
                {
                    return Failed($"invalid value \"{inlineValue}\" for flag -{name}: parse error");
                }

                value = inlineValue;
            }

            foreach (var key in flag.ConfigKeys)
            {
                settings[key] = value;
            }

            // A command flag (a switch that is on, or a value flag, whose value its keys carry) replaces serving;
            // when several are given, the one nats-server checks first wins whatever their order.
            var enabled = flag.Kind != FlagKind.Switch || value == "true";
            if (enabled && Rank(flag.Command) > Rank(command))
            {
                command = flag.Command;
            }
        }

        return (TlsFlags.Apply(settings) ?? ClusterFlags.Apply(settings)) is { } flagError ? Failed(flagError) : new CommandLine(command, settings, null);
    }

    // What nats-server's ProcessCommandLineArgs accepts after the flags: "version" or "help", nothing else.
    private static CommandLine Positional(IReadOnlyList<string> args, int start, HostCommand command, Dictionary<string, string?> settings)
    {
        if (start >= args.Count)
        {
            return (TlsFlags.Apply(settings) ?? ClusterFlags.Apply(settings)) is { } flagError ? Failed(flagError) : new CommandLine(command, settings, null);
        }

        return args[start] switch
        {
            "version" => new CommandLine(Rank(command) < Rank(HostCommand.Help) ? HostCommand.Version : command, settings, null),
            "help" => new CommandLine(Rank(command) < Rank(HostCommand.Help) ? HostCommand.Help : command, settings, null),
            var other => Failed($"unrecognized command: \"{other}\""),
        };
    }

    // nats-server's order of checks: -v, -h, then the "version"/"help" arguments, then -sl, then -t.
    private static int Rank(HostCommand command) => command switch
    {
        HostCommand.Version => 4,
        HostCommand.Help => 3,
        HostCommand.Signal => 2,
        HostCommand.CheckConfig => 1,
        _ => 0,
    };

    // Go's strconv.ParseBool spellings.
    private static bool TryParseBool(string text, out bool value)
    {
        switch (text)
        {
            case "1" or "t" or "T" or "true" or "TRUE" or "True":
                value = true;
                return true;
            case "0" or "f" or "F" or "false" or "FALSE" or "False":
                value = false;
                return true;
            default:
                value = false;
                return false;
        }
    }

    private static CommandLine Failed(string error) => new(HostCommand.Run, new Dictionary<string, string?>(), error);
}
