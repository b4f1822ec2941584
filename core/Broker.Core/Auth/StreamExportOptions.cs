namespace Broker.Core.Auth;

/// <summary>
/// One stream export of an account (nats-server's <c>exports: [{ stream: "orders.>", accounts: [B] }]</c>): messages
/// published in the account on subjects matching <see cref="Subject"/> may be imported by other accounts.
/// </summary>
public sealed class StreamExportOptions
{
    /// <summary>The exported subject; may hold wildcards. Required.</summary>
    public string Subject { get; set; } = "";

    /// <summary>
    /// The accounts allowed to import the stream. Default <see langword="null"/>: a public export, which every account
    /// may import (as nats-server when <c>accounts</c> is absent).
    /// </summary>
    public IList<string>? Accounts { get; set; }

    /// <summary>Creates a deep copy.</summary>
    /// <returns>The copy.</returns>
    public StreamExportOptions Clone() => new() { Subject = Subject, Accounts = Accounts is null ? null : [.. Accounts] };
}
