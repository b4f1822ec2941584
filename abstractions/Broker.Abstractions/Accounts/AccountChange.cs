namespace Broker.Abstractions;

/// <summary>
/// What a configuration reload (or, in operator mode, an account's first CONNECT or a claims update) did to one account
/// (<see cref="IAccountDirectory.Watch(Action{AccountChange})"/>; since contract 1.3).
/// </summary>
public sealed record AccountChange
{
    /// <summary>Describes a change.</summary>
    /// <param name="kind">What happened.</param>
    /// <param name="account">The account as it is now, or as it was for <see cref="AccountChangeKind.Removed"/>.</param>
    public AccountChange(AccountChangeKind kind, BrokerAccount account)
    {
        ArgumentNullException.ThrowIfNull(account);
        Kind = kind;
        Account = account;
    }

    /// <summary>What happened to the account.</summary>
    public AccountChangeKind Kind { get; }

    /// <summary>The account as it is now, or as it was last for <see cref="AccountChangeKind.Removed"/>.</summary>
    public BrokerAccount Account { get; }
}

/// <summary>What happened to an account (<see cref="AccountChange"/>).</summary>
public enum AccountChangeKind
{
    /// <summary>The account is new.</summary>
    Added,

    /// <summary>The account stays, and what <see cref="BrokerAccount"/> says of it changed.</summary>
    Updated,

    /// <summary>
    /// The account is gone: no client can connect into it any more and the reload closes its connections (their users
    /// are gone with it); in-process clients of the account keep an isolated subject space no one else reaches, and
    /// should be disposed.
    /// </summary>
    Removed,
}
