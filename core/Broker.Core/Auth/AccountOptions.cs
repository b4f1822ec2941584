namespace Broker.Core.Auth;

/// <summary>
/// One account of nats-server's <c>accounts { NAME: { ... } }</c> block: a tenant with its own subject space. Clients
/// of an account see only the subscriptions of that account. Users listed here authenticate into it; users of
/// <see cref="AuthorizationOptions.Users"/> belong to the global account <c>$G</c>.
/// </summary>
public sealed class AccountOptions
{
    /// <summary>The account's name. Required; <c>$G</c> is reserved.</summary>
    public string Name { get; set; } = "";

    /// <summary>
    /// The account's public NKey (<c>A...</c>), reported by monitoring as its identity. Default none.
    /// </summary>
    public string? Nkey { get; set; }

    /// <summary>Users (names with passwords, or NKey users) that authenticate into this account. Default empty.</summary>
    public IList<UserOptions> Users { get; set; } = [];

    /// <summary>Permissions for this account's users that have none of their own. Default none (full permissions).</summary>
    public PermissionsOptions? DefaultPermissions { get; set; }

    /// <summary>The account's limits (nats-server's account <c>limits { }</c>). Default: none (-1 everywhere).</summary>
    public AccountLimitOptions Limits { get; set; } = new();

    /// <summary>
    /// Subjects of this account other accounts may import (nats-server's <c>exports</c>). Default: none.
    /// </summary>
    public AccountExportOptions Exports { get; set; } = new();

    /// <summary>
    /// Other accounts' exports this account takes in (nats-server's <c>imports</c>), checked when the options are
    /// validated: the exporter must exist and allow this account, and imports may not form a cycle. Default: none.
    /// </summary>
    public AccountImportOptions Imports { get; set; } = new();

    /// <summary>
    /// JetStream in this account (nats-server's account <c>jetstream</c>): null (default) or <see
    /// cref="AccountJetStreamOptions.Enabled"/> false for none. Once any account is configured, only accounts that
    /// enable it have JetStream; <c>$G</c> has it only when no account is configured.
    /// </summary>
    public AccountJetStreamOptions? JetStream { get; set; }

    /// <summary>
    /// The account's subject mappings (nats-server's account <c>mappings { }</c>): publishes of its clients are
    /// routed by the mapped subject. Default empty.
    /// </summary>
    public IList<MappingOptions> Mappings { get; set; } = [];

    /// <summary>Creates a deep copy.</summary>
    /// <returns>The copy.</returns>
    public AccountOptions Clone() => new()
    {
        Name = Name,
        Nkey = Nkey,
        Users = [.. Users.Select(u => u.Clone())],
        DefaultPermissions = DefaultPermissions?.Clone(),
        Limits = Limits.Clone(),
        Exports = Exports.Clone(),
        Imports = Imports.Clone(),
        JetStream = JetStream?.Clone(),
        Mappings = [.. Mappings.Select(m => m.Clone())],
    };
}
