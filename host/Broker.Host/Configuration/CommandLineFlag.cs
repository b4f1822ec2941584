namespace Broker.Host.Configuration;

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
