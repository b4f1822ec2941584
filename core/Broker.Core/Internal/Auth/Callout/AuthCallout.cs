using System.Text;
using Broker.Abstractions;
using Broker.Core.Auth;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Jwt;
using Broker.Core.Internal.Protocol;
using Microsoft.Extensions.Logging;
using NATS.NKeys;

namespace Broker.Core.Internal.Auth.Callout;

/// <summary>The user a callout authorized and how long its user JWT lets it stay, or why it refused.</summary>
/// <param name="User">The user, bound to its placement account, with its permissions; null when refused.</param>
/// <param name="ExpiresIn">Time until the user JWT expires or its connect window ends, or null.</param>
/// <param name="Refusal">nats-server's reason for a refusal (empty when the service did not answer in time).</param>
internal sealed record CalloutResult(AuthenticatedUser? User, TimeSpan? ExpiresIn, string Refusal = "")
{
    /// <summary>A refusal for <paramref name="reason"/>.</summary>
    public static CalloutResult Refused(string reason) => new(null, null, reason);
}

/// <summary>Where one client's request goes: the callout account, the request's subject (the issuer), and the service's curve key when requests are sealed.</summary>
/// <param name="Account">The account the request is published in (its name).</param>
/// <param name="Issuer">The request's <c>sub</c>, and the key the user JWT must be issued by (server-config mode) or the callout account's key (operator mode).</param>
/// <param name="ServiceXKey">The service's public curve key, or null for plain requests.</param>
/// <param name="OperatorMode">Whether the account's JWT enabled the callout (placement by issuer account) rather than the configuration (placement by audience).</param>
internal sealed record CalloutScope(string Account, string Issuer, string? ServiceXKey, bool OperatorMode);

/// <summary>
/// The authorization callout of nats-server 2.10 (<c>auth_callout.go</c> <c>processClientOrLeafCallout</c>, and the
/// <c>auth.go</c> rule deciding who goes through it), in both of its modes: server-config mode
/// (<c>authorization { auth_callout }</c>: every client that is not one of the auth users, whatever the configured
/// users say) and operator mode (an account JWT's <c>authorization</c>: every user of that account that is not one of
/// its <c>auth_users</c>, after its own JWT authenticated it into the account). The broker signs an
/// <c>authorization_request</c> with its server key (<see cref="AuthCalloutRequest"/>), seals it with its curve key for
/// the service's xkey when one is set, publishes it to <c>$SYS.REQ.USER.AUTH</c> in the callout account with a reply
/// subject, and checks the answer (<see cref="AuthCalloutResponse"/>). The wait is an <c>await</c> under no lock,
/// bounded by the authentication timeout; every failure is logged with nats-server's reason and ends as Authorization
/// Violation. One per broker (made with a configured callout or in operator mode); a reload cannot change it.
/// </summary>
internal sealed class AuthCallout : IDisposable
{
    /// <summary>Where requests go (nats-server <c>AuthCalloutSubject</c>).</summary>
    public const string Subject = "$SYS.REQ.USER.AUTH";

    private const string XKeyHeader = "Nats-Server-Xkey";

    private readonly BrokerCore core;
    private readonly ILogger logger;
    private readonly AuthCalloutOptions? options;
    private readonly CalloutScope? configured;
    private readonly HashSet<string> authUsers;
    private readonly byte[] sealedHeaders;
    private readonly Lock clientLock = new();
    private readonly Dictionary<string, AuthCalloutClient> clients = new(StringComparer.Ordinal);

    /// <param name="core">The broker.</param>
    /// <param name="options">The configured callout, or null in operator mode (accounts' JWTs enable it).</param>
    public AuthCallout(BrokerCore core, AuthCalloutOptions? options)
    {
        this.core = core;
        logger = core.Logger;
        this.options = options?.Clone();
        authUsers = new HashSet<string>(this.options?.AuthUsers ?? [], StringComparer.Ordinal);
        configured = this.options is { } o ? new CalloutScope(o.Account, o.Issuer, string.IsNullOrEmpty(o.XKey) ? null : o.XKey, OperatorMode: false) : null;

        // nats-server's header with the server's public curve key, on every sealed request.
        sealedHeaders = Encoding.ASCII.GetBytes("NATS/1.0\r\n" + XKeyHeader + ": " + core.CurveKey.GetPublicKey() + "\r\n\r\n");
    }

    /// <summary>Whether a client authenticating as (or naming) <paramref name="rawUser"/> before CONNECT goes through a configured callout: all but the auth users.</summary>
    public bool Intercepts(string? rawUser) => configured is not null && (rawUser is null || !authUsers.Contains(rawUser));

    /// <summary>
    /// Decides a CONNECT that authenticated as <paramref name="user"/> (null: refused so far): the scope of the request
    /// when the service is to decide, else null with <paramref name="user"/> what to bind (an auth user in the callout
    /// account loses the right to publish to <c>$SYS.REQ.USER.AUTH</c>). <paramref name="rawUser"/> is nats-server's
    /// <c>getRawAuthUser</c>: the CONNECT's NKey, else its user, else the JWT's user key, else its token.
    /// </summary>
    public CalloutScope? Route(ConnectMessage connect, ref AuthenticatedUser? user, out string? rawUser)
    {
        if (configured is not null)
        {
            rawUser = NullIfEmpty(connect.Nkey) ?? user?.Name ?? NullIfEmpty(connect.User) ?? NullIfEmpty(connect.AuthToken);
            if (Intercepts(rawUser))
            {
                return configured;
            }

            user = user is null ? null : ForAuthUser(user, configured.Account);
            return null;
        }

        // Operator mode: only a client whose JWT authenticated it into an account that enables the callout. nats-server
        // also calls out (in $G, where no service runs) after a JWT that failed once its account was found; see docs/security.md.
        rawUser = null;
        if (user?.Jwt is not { } jwt || !core.Accounts.TryGet(user.Account, out var account) || account.Jwt?.Callout is not { } callout)
        {
            return null;
        }

        rawUser = NullIfEmpty(connect.Nkey) ?? NullIfEmpty(connect.User) ?? jwt.Claims.Subject ?? NullIfEmpty(connect.AuthToken);
        if (rawUser is null || !callout.AuthUsers!.Contains(rawUser))
        {
            return new CalloutScope(account.Name, account.Name, string.IsNullOrEmpty(callout.XKey) ? null : callout.XKey, OperatorMode: true);
        }

        user = ForAuthUser(user, account.Name);
        return null;
    }

    /// <summary>
    /// An auth user as the configuration authenticated it, but in the callout account unable to publish to
    /// <c>$SYS.REQ.USER.AUTH</c> (nats-server merges that deny into every client it authorizes into that account).
    /// </summary>
    public static AuthenticatedUser ForAuthUser(AuthenticatedUser user, string calloutAccount) =>
        user.Account != calloutAccount ? user : user with { Permissions = CalloutPermissions.DenyPublish(user.Permissions, Subject) };

    /// <summary>
    /// Asks the service of <paramref name="scope"/> about <paramref name="candidate"/> and waits up to
    /// <paramref name="timeout"/>: the user to bind, or the refusal (its reason logged) for an Authorization Violation.
    /// </summary>
    public async Task<CalloutResult> AuthorizeAsync(CalloutScope scope, CalloutCandidate candidate, TimeSpan timeout, CancellationToken cancellationToken)
    {
        try
        {
            return await RequestAsync(scope, candidate, timeout, cancellationToken).ConfigureAwait(false);
        }
#pragma warning disable CA1031 // Whatever went wrong, it refuses this client and nothing else.
        catch (Exception ex) when (ex is not OperationCanceledException)
#pragma warning restore CA1031
        {
            return Refuse($"Error processing auth callout on account \"{scope.Account}\": {ex.Message}");
        }
    }

    private async Task<CalloutResult> RequestAsync(CalloutScope scope, CalloutCandidate candidate, TimeSpan timeout, CancellationToken cancellationToken)
    {
        var accountName = scope.Account;
        if (!core.Accounts.TryGet(accountName, out var account))
        {
            return Refuse($"No valid account \"{accountName}\" for auth callout request: account missing");
        }

        // The user key the answer must be for: a fresh one per request, so an answer cannot be replayed.
        string userNkey;
        using (var userKey = KeyPair.CreatePair(PrefixByte.User))
        {
            userNkey = userKey.GetPublicKey();
        }

        var now = DateTimeOffset.UtcNow;
        var curveKey = scope.ServiceXKey is null ? null : core.CurveKey;
        var claims = AuthCalloutRequest.Build(core, scope.Issuer, candidate, userNkey, curveKey?.GetPublicKey(), timeout, now);
        var payload = Encoding.ASCII.GetBytes(JwtToken.Encode(claims, AuthorizationClaimsJsonContext.Default.AuthorizationRequestClaims, core.ServerKey, now));
        if (curveKey is not null)
        {
            payload = curveKey.Seal(payload, scope.ServiceXKey!);
        }

        BusReply reply;
        try
        {
            reply = await ClientFor(account).RequestAsync(Subject, curveKey is null ? [] : sealedHeaders, payload, timeout, cancellationToken).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            AuthCalloutLog.TimedOut(logger, accountName);
            return CalloutResult.Refused("");
        }
        catch (ObjectDisposedException)
        {
            // The broker is stopping.
            return CalloutResult.Refused("");
        }

        var op = scope.OperatorMode && core.JwtAccounts is { } jwtAccounts ? new OperatorCallout(account, jwtAccounts) : null;
        return Bind(reply, candidate, new CalloutExpectation(accountName, scope.Issuer, userNkey, core.ServerId, curveKey, scope.ServiceXKey, op));
    }

    /// <summary>The user an answer binds, or the refusal (its reason logged).</summary>
    private CalloutResult Bind(BusReply reply, CalloutCandidate candidate, CalloutExpectation expected)
    {
        var accountName = expected.Account;
        var now = DateTimeOffset.UtcNow;
        if (!AuthCalloutResponse.TryVerify(reply.Payload.Span, expected, core.Accounts, now, out var grant, out var reason))
        {
            return Refuse(reason);
        }

        var (user, placement, granted, validFor) = grant;
        if (!CalloutPermissions.HasValidConnectionTypes(granted))
        {
            return Refuse($"Authorized user on account \"{accountName}\" using invalid connection type");
        }

        PermissionsTemplate? template;
        try
        {
            template = UserPermissions.Compile(granted.Publish, granted.Subscribe, granted.Response, TimeProvider.System)
                ?? (expected.Operator is null ? CalloutPermissions.AccountDefaults(core.Options, placement.Name) : placement.Jwt?.DefaultPermissions);
            if (placement.Name == accountName)
            {
                template = CalloutPermissions.DenyPublish(template, Subject);
            }
        }
        catch (InvalidOperationException ex)
        {
            return Refuse("Could not register auth callout user: " + ex.Message);
        }

        // nats-server names the client by the JWT's name when it has one, else by what its CONNECT gave.
        var name = string.IsNullOrEmpty(user.Name) ? candidate.Client.User : user.Name;
        AuthCalloutLog.Authorized(logger, accountName, expected.UserNkey, placement.Name);
        return new CalloutResult(new AuthenticatedUser(name, template, placement.Name), ExpiresIn(user, validFor, now));
    }

    public void Dispose()
    {
        List<AuthCalloutClient> closing;
        lock (clientLock)
        {
            closing = [.. clients.Values];
            clients.Clear();
        }

        foreach (var client in closing)
        {
            client.DisposeAsync().AsTask().GetAwaiter().GetResult();
        }
    }

    // nats-server setExpiration: the earlier of the JWT's expiry and the end of its connect window.
    private static TimeSpan? ExpiresIn(UserClaims user, TimeSpan validFor, DateTimeOffset now)
    {
        var window = validFor == TimeSpan.MaxValue ? (TimeSpan?)null : validFor;
        if (user.Expires == 0)
        {
            return window;
        }

        var expiresAt = TimeSpan.FromSeconds(Math.Max(0, user.Expires - now.ToUnixTimeSeconds()));
        return window is { } end && end < expiresAt ? end : expiresAt;
    }

    // Logs why a client is refused (a warning, as nats-server's) and returns the refusal.
    private CalloutResult Refuse(string reason)
    {
        AuthCalloutLog.Refused(logger, reason);
        return CalloutResult.Refused(reason);
    }

    private static string? NullIfEmpty(string? value) => string.IsNullOrEmpty(value) ? null : value;

    /// <summary>The client in a callout account, made at its first request (again if a reload or claims delete replaced the account).</summary>
    private AuthCalloutClient ClientFor(Account account)
    {
        AuthCalloutClient? stale = null;
        AuthCalloutClient current;
        lock (clientLock)
        {
            if (!clients.TryGetValue(account.Name, out var client) || !ReferenceEquals(client.Account, account) || client.IsClosed)
            {
                stale = client;
                client = new AuthCalloutClient(core, account);
                clients[account.Name] = client;
            }

            current = client;
        }

        stale?.DisposeAsync().AsTask().GetAwaiter().GetResult();
        return current;
    }
}
