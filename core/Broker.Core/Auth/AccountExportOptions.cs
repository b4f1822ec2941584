namespace Broker.Core.Auth;

/// <summary>What an account offers to other accounts (nats-server's account <c>exports</c>).</summary>
public sealed class AccountExportOptions
{
    /// <summary>The account's stream exports. Default empty.</summary>
    public IList<StreamExportOptions> Streams { get; set; } = [];

    /// <summary>The account's service exports. Default empty.</summary>
    public IList<ServiceExportOptions> Services { get; set; } = [];

    /// <summary>Creates a deep copy.</summary>
    /// <returns>The copy.</returns>
    public AccountExportOptions Clone() => new() { Streams = [.. Streams.Select(s => s.Clone())], Services = [.. Services.Select(s => s.Clone())] };
}
