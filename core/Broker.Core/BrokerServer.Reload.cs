using Broker.Core.Internal.Auth;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Hosting;
using Broker.Core.Internal.Reload;

namespace Broker.Core;

/// <summary>Configuration reload (nats-server <c>--signal reload</c> / SIGHUP).</summary>
public sealed partial class BrokerServer
{
    private readonly SemaphoreSlim reloadGate = new(1, 1);

    /// <summary>
    /// Replaces the running configuration without dropping connections: users, permissions and limits change for
    /// live connections (each is authenticated again and loses subscriptions it may no longer have, with a -ERR for
    /// each, as nats-server does). Accounts are added, changed and removed; a connection whose user is gone or now
    /// belongs to another account is closed (nats-server's "Client Closed", without -ERR), the others keep their
    /// account and subscriptions. A reload that changes a setting needing a restart (host, port, server name, header
    /// support, monitoring listener, <c>auth_callout</c>) is refused as a whole and nothing is applied. A <c>max_connections</c> lowered below
    /// the connections open closes the newest ones beyond it with <c>maximum connections exceeded</c>. Each change is logged as nats-server
    /// logs it (<c>Reloaded: max_payload = 1048576</c>); the caller logs the end of the reload. It returns once the
    /// plugins applied the account changes (JetStream enabled or disabled for an account; at most 2 seconds).
    /// </summary>
    /// <param name="options">The new settings; copied.</param>
    /// <param name="cancellationToken">Cancels waiting for a reload already in progress.</param>
    /// <returns>What changed, or what prevented the reload.</returns>
    /// <exception cref="InvalidOperationException">The broker is not running.</exception>
    public async Task<ReloadResult> ReloadAsync(BrokerOptions options, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(options);
        if (Volatile.Read(ref state) != 1)
        {
            throw new InvalidOperationException("The broker is not running.");
        }

        await reloadGate.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            var next = options.Clone();
            try
            {
                next.Validate();
            }
            catch (InvalidOperationException ex)
            {
                return ReloadResult.Failed(ex.Message);
            }

            // A configuration naming the port we actually bound (after asking for a random one) asks for no change.
            if (next.Port == ClientEndPoint.Port)
            {
                next.Port = core.Options.Port;
            }

            // As nats-server (its AuthCallout option is not reloadable): the callout keeps what it started with.
            if (OptionsComparer.AuthCalloutChanged(core.Options, next))
            {
                const string message = "config reload not supported for AuthCallout; restart the server to change it";
                HostingLog.ReloadRefused(logger, message);
                return ReloadResult.Failed(message);
            }

            var changed = OptionsComparer.Changed(core.Options, next);
            var restartOnly = changed.Where(s => s.Reloadability == OptionsComparer.Reloadability.Restart).Select(s => s.Key).ToList();
            if (restartOnly.Count > 0)
            {
                var message = "config reload not supported for " + string.Join(", ", restartOnly) + "; restart the server to change them";
                HostingLog.ReloadRefused(logger, message);
                return ReloadResult.Failed(message);
            }

            Authenticator authenticator;
            try
            {
                authenticator = core.CreateAuthenticator(next, logger);
            }
            catch (InvalidOperationException ex)
            {
                return ReloadResult.Failed(ex.Message);
            }

            var previous = core.Authenticator;
            var previousOptions = core.Options;

            // Accounts before the authenticator whose users name them, so a client authenticating meanwhile finds its
            // account (or, authenticated by the old one into a removed account, is refused).
            core.Accounts.Apply(next.Accounts, next.Mappings);

            // Stream imports may have changed: every subscription's shadows follow the new ones.
            foreach (var client in core.Clients.Values)
            {
                client.RebuildShadows();
            }

            core.Options = next;
            core.Authenticator = authenticator;
            core.RefreshInfo();
            foreach (var client in core.Clients.Values)
            {
                if (client is NatsClient nats)
                {
                    nats.ApplyReload(previous, authenticator);
                }
                else if (client is BusConnection adapterConnection)
                {
                    adapterConnection.ApplyReload(previous, authenticator);
                }
            }

            // As nats-server: a lowered max_connections closes the connections beyond it (here the newest).
            var closedBeyondLimit = core.CloseBeyondLimit();
            if (closedBeyondLimit > 0)
            {
                HostingLog.ClosedBeyondMaxConnections(logger, closedBeyondLimit);
            }

            foreach (var setting in changed)
            {
                foreach (var change in OptionsComparer.Describe(setting, previousOptions, next))
                {
                    HostingLog.Reloaded(logger, change);
                }
            }

            // As nats-server, which reconfigures the accounts' JetStream within the reload: the plugins' account
            // watchers have applied the changes (at most AccountDirectory.SettleLimit) when the reload returns.
            await accountDirectory.WaitSettledAsync(cancellationToken).ConfigureAwait(false);

            var applied = changed.Select(s => s.Reloadability == OptionsComparer.Reloadability.NewConnections ? s.Key + " (new connections)" : s.Key).ToList();
            return new ReloadResult(true, applied, null);
        }
        finally
        {
            reloadGate.Release();
        }
    }
}

/// <summary>The outcome of <see cref="BrokerServer.ReloadAsync"/>.</summary>
/// <param name="Succeeded">Whether the new configuration is in force.</param>
/// <param name="Applied">The nats-server names of the settings that changed (those marked "new connections" apply to connections accepted from now on).</param>
/// <param name="Error">Why the reload was refused, when it was; nothing was applied then.</param>
public sealed record ReloadResult(bool Succeeded, IReadOnlyList<string> Applied, string? Error)
{
    internal static ReloadResult Failed(string error) => new(false, [], error);
}
