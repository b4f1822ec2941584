using System.Text;
using Broker.Abstractions;
using Broker.Core.Auth;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Jwt;
using Microsoft.Extensions.Logging;
using NATS.NKeys;

namespace Broker.Core.Internal.Auth.Callout;

/// <summary>The user a callout authorized, and how long its user JWT lets it stay (null: no limit).</summary>
/// <param name="User">The user, bound to its placement account, with its permissions.</param>
/// <param name="ExpiresIn">Time until the user JWT expires or its connect window ends, or null.</param>
internal sealed record CalloutResult(AuthenticatedUser User, TimeSpan? ExpiresIn);

/// <summary>
/// The authorization callout of nats-server 2.10 in server-config mode (<c>auth_callout.go</c>
/// <c>processClientOrLeafCallout</c>, and the <c>auth.go</c> rule deciding who goes through it): every client that is
/// not one of the auth users is authorized by the service, whatever the configured users say. The broker signs an
/// <c>authorization_request</c> with its server key (<see cref="AuthCalloutRequest"/>), seals it for the service's
/// xkey when one is set, publishes it to <c>$SYS.REQ.USER.AUTH</c> in the callout account with a reply subject, and
/// checks the answer (<see cref="AuthCalloutResponse"/>). The wait is an <c>await</c> under no lock, bounded by the
/// authentication timeout; every failure is logged with nats-server's reason and ends as Authorization Violation.
/// One per broker; a reload cannot change it (nats-server refuses that too).
/// </summary>
internal sealed class AuthCallout : IDisposable
{
    /// <summary>Where requests go (nats-server <c>AuthCalloutSubject</c>).</summary>
    public const string Subject = "$SYS.REQ.USER.AUTH";

    private const string XKeyHeader = "Nats-Server-Xkey";

    private readonly BrokerCore core;
    private readonly ILogger logger;
    private readonly HashSet<string> authUsers;
    private readonly KeyPair? curveKey;
    private readonly byte[] headers = [];
    private readonly Lock clientLock = new();
    private AuthCalloutClient? client;

    public AuthCallout(BrokerCore core, AuthCalloutOptions options)
    {
        this.core = core;
        Options = options.Clone();
        logger = core.Logger;
        authUsers = new HashSet<string>(Options.AuthUsers, StringComparer.Ordinal);
        if (!string.IsNullOrEmpty(Options.XKey))
        {
            // nats-server's server xkey: made at start, its public key travels in the request and the header.
            curveKey = KeyPair.CreatePair(PrefixByte.Curve);
            headers = Encoding.ASCII.GetBytes("NATS/1.0\r\n" + XKeyHeader + ": " + curveKey.GetPublicKey() + "\r\n\r\n");
        }
    }

    /// <summary>The options in force (a copy of those at start).</summary>
    public AuthCalloutOptions Options { get; }

    /// <summary>Whether a client authenticating as (or naming) <paramref name="rawUser"/> goes through the callout: all but the auth users.</summary>
    public bool Intercepts(string? rawUser) => rawUser is null || !authUsers.Contains(rawUser);

    /// <summary>
    /// An auth user as the configuration authenticated it, but in the callout account unable to publish to
    /// <c>$SYS.REQ.USER.AUTH</c> (nats-server merges that deny into every client it authorizes into that account).
    /// </summary>
    public AuthenticatedUser ForAuthUser(AuthenticatedUser user, string rawUser)
    {
        if (user.Account != Options.Account)
        {
            return user;
        }

        var permissions = CalloutPermissions.DenyPublish(CalloutPermissions.OfConfiguredUser(core.Options, rawUser), Subject);
        return user with { Permissions = PermissionsTemplate.Compile(permissions) };
    }

    /// <summary>
    /// Asks the service about <paramref name="candidate"/> and waits up to <paramref name="timeout"/>: the user to bind,
    /// or null (the reason logged) for an Authorization Violation.
    /// </summary>
    public async Task<CalloutResult?> AuthorizeAsync(CalloutCandidate candidate, TimeSpan timeout, CancellationToken cancellationToken)
    {
        try
        {
            return await RequestAsync(candidate, timeout, cancellationToken).ConfigureAwait(false);
        }
#pragma warning disable CA1031 // Whatever went wrong, it refuses this client and nothing else.
        catch (Exception ex) when (ex is not OperationCanceledException)
#pragma warning restore CA1031
        {
            AuthCalloutLog.Refused(logger, $"Error processing auth callout on account \"{Options.Account}\": {ex.Message}");
            return null;
        }
    }

    private async Task<CalloutResult?> RequestAsync(CalloutCandidate candidate, TimeSpan timeout, CancellationToken cancellationToken)
    {
        var accountName = Options.Account;
        if (!core.Accounts.TryGet(accountName, out var account))
        {
            AuthCalloutLog.Refused(logger, $"No valid account \"{accountName}\" for auth callout request: account missing");
            return null;
        }

        // The user key the answer must be for: a fresh one per request, so an answer cannot be replayed.
        string userNkey;
        using (var userKey = KeyPair.CreatePair(PrefixByte.User))
        {
            userNkey = userKey.GetPublicKey();
        }

        var now = DateTimeOffset.UtcNow;
        var claims = AuthCalloutRequest.Build(core, Options, candidate, userNkey, curveKey?.GetPublicKey(), timeout, now);
        var payload = Encoding.ASCII.GetBytes(JwtToken.Encode(claims, AuthorizationClaimsJsonContext.Default.AuthorizationRequestClaims, core.ServerKey, now));
        if (curveKey is not null)
        {
            payload = curveKey.Seal(payload, Options.XKey!);
        }

        BusReply reply;
        try
        {
            reply = await ClientFor(account).RequestAsync(Subject, headers, payload, timeout, cancellationToken).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            AuthCalloutLog.TimedOut(logger, accountName);
            return null;
        }
        catch (ObjectDisposedException)
        {
            // The broker is stopping.
            return null;
        }

        return Bind(reply, candidate, new CalloutExpectation(accountName, Options.Issuer, userNkey, core.ServerId, curveKey, Options.XKey));
    }

    /// <summary>The user an answer binds, or null (the reason logged).</summary>
    private CalloutResult? Bind(BusReply reply, CalloutCandidate candidate, CalloutExpectation expected)
    {
        var accountName = expected.Account;
        if (!AuthCalloutResponse.TryVerify(reply.Payload.Span, expected, core.Accounts, DateTimeOffset.UtcNow, out var user, out var placement, out var validFor, out var reason))
        {
            AuthCalloutLog.Refused(logger, reason);
            return null;
        }

        if (!CalloutPermissions.HasValidConnectionTypes(user.Nats))
        {
            AuthCalloutLog.Refused(logger, $"Authorized user on account \"{accountName}\" using invalid connection type");
            return null;
        }

        var permissions = CalloutPermissions.FromClaims(user.Nats) ?? CalloutPermissions.AccountDefaults(core.Options, placement.Name);
        if (placement.Name == accountName)
        {
            permissions = CalloutPermissions.DenyPublish(permissions, Subject);
        }

        PermissionsTemplate? template;
        try
        {
            template = permissions is null ? null : PermissionsTemplate.Compile(permissions);
        }
        catch (InvalidOperationException ex)
        {
            AuthCalloutLog.Refused(logger, "Could not register auth callout user: " + ex.Message);
            return null;
        }

        // nats-server names the client by the JWT's name when it has one, else by what its CONNECT gave.
        var name = string.IsNullOrEmpty(user.Name) ? candidate.RawUser : user.Name;
        AuthCalloutLog.Authorized(logger, accountName, expected.UserNkey, placement.Name);
        return new CalloutResult(new AuthenticatedUser(name, template, placement.Name), ExpiresIn(user, validFor, DateTimeOffset.UtcNow));
    }

    public void Dispose()
    {
        AuthCalloutClient? closing;
        lock (clientLock)
        {
            closing = client;
            client = null;
        }

        closing?.DisposeAsync().AsTask().GetAwaiter().GetResult();
        curveKey?.Dispose();
    }

    // nats-server setExpiration: the earlier of the JWT's expiry and the end of its connect window.
    private static TimeSpan? ExpiresIn(UserClaims user, TimeSpan validFor, DateTimeOffset now)
    {
        if (user.Expires == 0)
        {
            return validFor > TimeSpan.Zero ? validFor : null;
        }

        var expiresAt = TimeSpan.FromSeconds(Math.Max(0, user.Expires - now.ToUnixTimeSeconds()));
        return validFor > TimeSpan.Zero && validFor < expiresAt ? validFor : expiresAt;
    }

    /// <summary>The client in the callout account, made at the first request (again if a reload replaced the account).</summary>
    private AuthCalloutClient ClientFor(Account account)
    {
        AuthCalloutClient? stale = null;
        AuthCalloutClient current;
        lock (clientLock)
        {
            if (client is null || !ReferenceEquals(client.Account, account) || client.IsClosed)
            {
                stale = client;
                client = new AuthCalloutClient(core, account);
            }

            current = client;
        }

        stale?.DisposeAsync().AsTask().GetAwaiter().GetResult();
        return current;
    }
}
