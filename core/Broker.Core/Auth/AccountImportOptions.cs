namespace Broker.Core.Auth;

/// <summary>What an account takes from other accounts' exports (nats-server's account <c>imports</c>).</summary>
public sealed class AccountImportOptions
{
    /// <summary>The account's stream imports. Default empty.</summary>
    public IList<StreamImportOptions> Streams { get; set; } = [];

    /// <summary>The account's service imports. Default empty.</summary>
    public IList<ServiceImportOptions> Services { get; set; } = [];

    /// <summary>Creates a deep copy.</summary>
    /// <returns>The copy.</returns>
    public AccountImportOptions Clone() => new() { Streams = [.. Streams.Select(s => s.Clone())], Services = [.. Services.Select(s => s.Clone())] };
}
